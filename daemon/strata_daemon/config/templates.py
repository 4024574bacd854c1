"""Jinja2 templates: a home's own `templates/` folder first, then the ones strata ships.

A person overrides a layout by copying a file from the shipped `templates/` into their home
and editing it. Markdown is not HTML: nothing is escaped. Undefined names are errors, so a
typo in an override is reported instead of rendering as an empty string. Every value a
template prints has its control characters written out (`\\x1b`): the files are read with `cat`.
"""

from __future__ import annotations

import jinja2

from strata_daemon.base.wording import printable
from strata_daemon.config.home import Home, shipped
from strata_daemon.errors import ConfigError

SHIPPED = shipped("templates")
_FIX = "fix it, or delete the copy in your home to use the shipped one"


class Templates:
    def __init__(self, home: Home):
        self.env = jinja2.Environment(
            loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(home.templates_dir)),
                                        jinja2.FileSystemLoader(str(SHIPPED))]),
            autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True,
            lstrip_blocks=True, finalize=lambda v: printable(v) if isinstance(v, str) else v)
        self._compiled: dict[str, tuple[str, jinja2.Template]] = {}  # file -> (its text, compiled)

    def load(self, name: str) -> tuple[jinja2.Template, str]:
        """The template and its source text (part of a dossier's input: editing it refreshes).
        The file is read on every call, so a new or edited override takes effect at once; it
        is compiled again only when its text changed."""
        try:
            source, filename, _ = self.env.loader.get_source(self.env, name)
        except jinja2.TemplateNotFound:
            raise ConfigError(f"the template {name} is missing",
                              hint=f"copy it back from the shipped templates ({SHIPPED})") from None
        cached = self._compiled.get(filename)
        if cached is None or cached[0] != source:
            try:
                template = self.env.from_string(source)
            except jinja2.TemplateSyntaxError as e:
                raise ConfigError(f"the template {filename} has a syntax error on line {e.lineno}: {e.message}",
                                  hint=_FIX) from None
            template.name = template.filename = filename
            cached = self._compiled[filename] = (source, template)
        return cached[1], source


def render(template: jinja2.Template, block: str | None = None, **values) -> str:
    """Render a template, or one of its blocks; a failure names the template and the reason."""
    try:
        if block is None:
            return template.render(**values)
        return "".join(template.blocks[block](template.new_context(values)))
    except KeyError:
        raise ConfigError(f"the template {template.name} has no block {block!r}",
                          hint="compare it with the shipped one") from None
    except jinja2.TemplateError as e:
        raise ConfigError(f"the template {template.name} failed to render: {e}", hint=_FIX) from None
