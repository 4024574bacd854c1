"""Jinja2 templates: a home's own `templates/` folder first, then the ones strata ships.

A person overrides a layout by copying a file from the shipped `templates/` into their home
and editing it. Markdown is not HTML: nothing is escaped. Undefined names are errors, so a
typo in an override is reported instead of rendering as an empty string.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from .errors import ConfigError
from .home import Home

SHIPPED = Path(__file__).resolve().parent.parent / "templates"


def environment(home: Home) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(home.templates_dir)),
                                    jinja2.FileSystemLoader(str(SHIPPED))]),
        autoescape=False, undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True,
        lstrip_blocks=True)


def _where(env: jinja2.Environment, name: str) -> str:
    try:
        return env.loader.get_source(env, name)[1] or name
    except jinja2.TemplateNotFound:
        return name


def load(env: jinja2.Environment, name: str) -> tuple[jinja2.Template, str]:
    """The template and its source text (part of a dossier's input: editing it refreshes)."""
    try:
        source, filename, _ = env.loader.get_source(env, name)
        return env.get_template(name), source
    except jinja2.TemplateNotFound:
        raise ConfigError(f"the template {name} is missing",
                          hint=f"restore it from strata's templates/ folder ({SHIPPED})") from None
    except jinja2.TemplateSyntaxError as e:
        raise ConfigError(f"the template {e.filename or name} has a syntax error on line {e.lineno}: {e.message}",
                          hint="fix it, or delete the copy in your home to use the shipped one") from None


def render(template: jinja2.Template, env: jinja2.Environment, block: str | None = None, **values) -> str:
    """Render a template, or one of its blocks; a failure names the template and the reason."""
    try:
        if block is None:
            return template.render(**values)
        return "".join(template.blocks[block](template.new_context(values)))
    except KeyError:
        raise ConfigError(f"the template {_where(env, template.name)} has no block {block!r}",
                          hint="compare it with the shipped one") from None
    except jinja2.TemplateError as e:
        raise ConfigError(f"the template {_where(env, template.name)} failed to render: {e}",
                          hint="fix it, or delete the copy in your home to use the shipped one") from None
