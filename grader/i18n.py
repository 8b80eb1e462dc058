"""The instructor's side in the instructor's language: English or Chinese, by the locale.

What an instructor reads (`python -m grader --help` and its refusals, grading progress, the score
table, the class report, the demo's lines) is written in English in the code and marked with
`_()` (`ngettext` for counts); its Chinese is in grader/locale/zh/LC_MESSAGES/grader.po, compiled
into grader.mo beside it (`make messages`: Babel extracts, updates and compiles;
tests/test_locale.py checks the catalogue is complete and compiled). The language is chosen as
gettext chooses it, from LANGUAGE, LC_ALL, LC_MESSAGES, then LANG: any Chinese locale (zh_CN,
zh_TW, ...) gives the Chinese, C, POSIX or any other gives English. The lookup is the standard
library's gettext on the compiled catalogue: nothing to import at run time but the .mo file.

What students read (feedback pages, test messages, the notes of grader/messages.py, which also
appear in the instructor's table as they were written to the student) stays Chinese and is not here.
"""

from __future__ import annotations

import functools
import gettext
import os
from pathlib import Path

DOMAIN = "grader"
LOCALEDIR = Path(__file__).parent / "locale"
ENVIRONMENT = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")  # gettext's order


def translation() -> gettext.NullTranslations:
    """The catalogue for the locale in the environment now (read again whenever it changes)."""
    return _translation(tuple(os.environ.get(name, "") for name in ENVIRONMENT))


@functools.cache
def _translation(environment: tuple[str, ...]) -> gettext.NullTranslations:
    return gettext.translation(DOMAIN, LOCALEDIR, fallback=True)


def _(message: str) -> str:
    return translation().gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    return translation().ngettext(singular, plural, count)


def N_(message: str) -> str:
    """Marks a message for the catalogue where it is defined; translated where it is shown."""
    return message


def language() -> str:
    """ "zh" or "en": the language of the text shown now (an HTML page's lang)."""
    return "zh" if isinstance(translation(), gettext.GNUTranslations) else "en"


def use_for_argparse() -> None:
    """argparse looks its own words up in gettext's global text domain: make that ours, so
    `--help` and its refusals read in one language (the CLI's process only)."""
    gettext.bindtextdomain(DOMAIN, str(LOCALEDIR))
    gettext.textdomain(DOMAIN)


# argparse's words that `python -m grader --help` and its refusals show (argparse.py's msgids).
ARGPARSE = [
    N_("usage: "),
    N_("%(heading)s:"),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
]
