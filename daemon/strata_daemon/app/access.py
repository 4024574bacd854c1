"""Who may reach which namespace of a store on PostgreSQL: login roles bound to namespaces,
which the server's row-level security enforces (store/postgres/roles.py). A part of the Memory
facade (memory.py assembles it). A home's own file has no roles: its namespaces are kept by
strata's own queries."""

from __future__ import annotations

import asyncio

from strata_daemon.base.namespace import check_namespace
from strata_daemon.errors import InvalidInput

NO_ROLES = InvalidInput("this home keeps its memories in its own SQLite file, which has no roles",
                        hint="roles bind namespaces on a PostgreSQL store (store.url); docs/operations.md")


class Access:
    """The facade's roles (memory.py assembles the facade)."""

    def _roles(self):
        if self.db.dialect != "postgres":
            raise NO_ROLES
        from strata_daemon.store.postgres import roles

        return roles

    async def grant_role(self, role: str, agent: str | None = None) -> dict:
        """Bind the server's login ROLE to namespace AGENT (default: this one): the server lets it
        read and change that namespace's rows and read the namespaces in agent.shared, and no
        others, whatever SQL it sends. Run as the tables' owner."""
        roles = self._roles()
        agent = check_namespace(agent or self.agent)
        return await self.db.transact(roles.grant, role, agent, list(self.config["agent.shared"]))

    async def revoke_role(self, role: str) -> dict:
        roles = self._roles()
        return await self.db.transact(roles.revoke, role)

    async def copy_store(self, target: str, progress=None) -> dict:
        """Copy this home's store into TARGET (`sqlite`: the home's own file; or a PostgreSQL
        URL) and check every table's rows on both sides (store/copying.py). Run again after an
        interruption, it writes only what is missing."""
        from strata_daemon.store import copying, engines

        return await asyncio.to_thread(copying.copy_home, self.home.db_path, str(self.home.root),
                                       engines.url_of(self.config["store.url"]), target, progress)

    async def bound_roles(self) -> list[dict]:
        return await self.db.run(self._roles().bound)
