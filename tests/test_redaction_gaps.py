"""Three gaps of redaction by shape, each held here: a JWT's signature left after
``<redacted>``, a URL's password after a lost slash (``https:/user:pw@host``, a URL read
as a file path), and a closing bracket eaten with a ``password=`` value. Each through
the functions, through hypothesis, and through the installed ``toolbench`` script's
usage-error line."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.secrets import forget_registered_secrets
from toolbench.cassettes.scrub import scrub_response
from toolbench.cassettes.stream_scrub import redact_stream
from toolbench.redaction import (
    REDACTED,
    redact_error,
    redact_pieces,
    redact_shapes,
    register_url_secrets,
    url_secrets,
)
from toolbench.secret_shapes import find_shapes, is_placeholder

HEADER = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
PAYLOAD = "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
SIGNATURE = "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
JWT = f"{HEADER}.{PAYLOAD}.{SIGNATURE}"
SCRIPT = Path(sys.executable).parent / "toolbench"


def _no_part_of_jwt(text: str) -> None:
    for part in (HEADER, PAYLOAD, SIGNATURE):
        assert part not in text, text


# ------------------------------------------------------------------ 1. the whole JWT


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"token {JWT}", f"token {REDACTED}"),
        (f"https://h/x?jwt={JWT}&a=1", f"https://h/x?jwt={REDACTED}&a=1"),
        (f"https://h/cb#id_token={JWT}", f"https://h/cb#id_token={REDACTED}"),
        (json.dumps({"t": JWT}), json.dumps({"t": REDACTED})),
        (f'{{\\"t\\": \\"{JWT}\\"}}', f'{{\\"t\\": \\"{REDACTED}\\"}}'),  # JSON in JSON
        (f"x{JWT}. Next", f"x{REDACTED}. Next"),  # glued to a word: detect-secrets' find
        (f"({JWT})", f"({REDACTED})"),
    ],
)
def test_a_jwt_goes_whole_signature_included(text: str, expected: str) -> None:
    assert redact_shapes(text) == expected
    assert redact_error(text) == expected


def test_a_jwt_longer_than_a_detect_secrets_window_goes_whole() -> None:
    long_jwt = f"{HEADER}.{'eyJ' + 'a' * 700}.{SIGNATURE}"
    text = "x" * 3000 + " " + long_jwt + " end"
    assert redact_shapes(text) == "x" * 3000 + f" {REDACTED} end"


_B64URL = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", min_size=8)
_AROUND = st.sampled_from([" ", "\n", '"', "'", "(", ")", "[", "]", ",", "&", "?", "<", ">"])
"""What may stand beside a token (``=`` only before it: after it, it is padding)."""


@settings(max_examples=150, deadline=None)
@given(
    _B64URL, _B64URL, _B64URL, _AROUND | st.just("="), _AROUND, st.text("ab xy.,:;", max_size=20)
)
def test_any_jwt_in_any_surrounding_leaves_no_part(
    header: str, payload: str, signature: str, before: str, after: str, tail: str
) -> None:
    jwt = f"eyJ{header}.eyJ{payload}.{signature}"
    text = f"auth{before}{jwt}{after}{tail}"
    out = redact_shapes(text)
    assert out == f"auth{before}{REDACTED}{after}{tail}"


def test_an_escaped_jwt_in_an_error_body_reaches_no_cassette() -> None:
    escaped = "".join(f"\\u{ord(c):04x}" for c in JWT[:5]) + JWT[5:]
    body = ('{"error": {"message": "bad token ' + escaped + '"}}').encode()
    response = {
        "status": {"code": 401, "message": "Unauthorized"},
        "headers": {"content-type": ["application/json"]},
        "body": {"string": body},
    }
    out = scrub_response(response, [])
    assert out is not None
    text = out["body"]["string"].decode()
    _no_part_of_jwt(text)
    assert json.loads(text) == {"error": {"message": f"bad token {REDACTED}"}}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, len(JWT) + 20), max_size=6))
def test_a_known_jwt_split_anywhere_over_events_leaves_no_part(cuts: list[int]) -> None:
    text = f"Your token: {JWT} ok"
    bounds = sorted({0, len(text), *(min(c, len(text)) for c in cuts)})
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    out = redact_pieces(pieces, [JWT])
    assert "".join(out) == f"Your token: {REDACTED} ok"
    events = b"".join(
        f"data: {json.dumps({'choices': [{'delta': {'content': p}}]})}\n\n".encode() for p in pieces
    )
    chunks = [(events[i : i + 7], float(i)) for i in range(0, len(events), 7)]
    redacted = redact_stream(chunks, [JWT])
    assert redacted is not None
    _no_part_of_jwt("".join(t for t, _ in redacted))


# ------------------------------------------------------ 2. a URL that lost a slash


@pytest.mark.parametrize("scheme", ["https", "http", "postgres", "redis+tls"])
def test_a_password_in_a_url_read_as_a_path_is_redacted(scheme: str) -> None:
    text = f"error: {scheme}:/user:hunter2pw@host/x: no such file"
    assert redact_shapes(text) == f"error: {scheme}:/user:{REDACTED}@host/x: no such file"


def test_url_secrets_finds_the_userinfo_after_one_slash() -> None:
    assert "hunter2pw" in url_secrets("https:/someone:hunter2pw@host/x?key=qwertyuiop")
    assert "qwertyuiop" in url_secrets("https:/someone:hunter2pw@host/x?key=qwertyuiop")
    forget_registered_secrets()
    try:
        register_url_secrets("https:/someone:hunter2pw@host/x")
        assert redact_error("seen hunter2pw") == f"seen {REDACTED}"
    finally:
        forget_registered_secrets()


@pytest.mark.parametrize("text", ["see C:/Users/me/file@2x.png", "a:/b/c@d", "mailto:me@host"])
def test_paths_and_addresses_without_a_password_are_left(text: str) -> None:
    assert redact_shapes(text) == text


# ------------------------------------------------- 3. the value ends where it ends


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter22)", f"password={REDACTED})"),
        ("f(password=hunter22)", f"f(password={REDACTED})"),
        ("f(password=hunter22, b)", f"f(password={REDACTED}, b)"),
        ("[password=hunter22]", f"[password={REDACTED}]"),
        ("{db_password=hunter22}", f"{{db_password={REDACTED}}}"),
        ("<password=hunter22>", f"<password={REDACTED}>"),
        ("f(password='hunter22')", f"f(password='{REDACTED}')"),
        ('f(password="hunter22"),', f'f(password="{REDACTED}"),'),
        ("password=pa(ss)word1)", f"password={REDACTED})"),  # its own brackets go with it
    ],
)
def test_closing_brackets_and_quotes_after_a_value_survive(text: str, expected: str) -> None:
    assert redact_shapes(text) == expected


_VALUE = st.text("abcdefghXYZ0123456789!$%*+-./:@^_|~", min_size=6, max_size=30).filter(
    lambda v: any(c.isalnum() for c in v) and not is_placeholder(v)
)
"""A password's characters (no quote, comma or bracket); ``$X0`` and ``YOUR_KEY`` are
what a model writes where one goes, left by design."""


@settings(max_examples=150, deadline=None)
@given(
    _VALUE,
    st.sampled_from(["password", "secret", "api_key", "db_password", "token"]),
    st.sampled_from(["(", "[", "{", "<", "f("]),
    st.sampled_from(["", "'", '"']),
    st.sampled_from(["", ",", ", x", ";"]),
)
def test_a_keyword_value_in_brackets_keeps_the_brackets(
    value: str, key: str, opener: str, quote: str, rest: str
) -> None:
    closer = {"(": ")", "[": "]", "{": "}", "<": ">", "f(": ")"}[opener]
    text = f"{opener}{key}={quote}{value}{quote}{closer}{rest}"
    out = redact_shapes(text)
    assert value not in out
    assert out.endswith(f"{quote}{closer}{rest}"), out
    assert out.startswith(f"{opener}{key}={quote}"), out


def test_find_shapes_gives_the_value_without_the_closer() -> None:
    assert {s.value for s in find_shapes("f(password=hunter22)")} == {"hunter22"}


# ------------------------------------------------------------- the usage-error line


@pytest.mark.parametrize(
    ("arg", "secret"),
    [
        ("https://user:hunter2pw@host/x", "hunter2pw"),
        (f"https://h/x?jwt={JWT}", SIGNATURE),
        (f"run-{JWT}", SIGNATURE),
        ("f(password=hunter2pw)", "hunter2pw"),
    ],
)
def test_the_installed_scripts_usage_error_holds_no_byte_of_it(
    arg: str, secret: str, tmp_path: Path
) -> None:
    done = subprocess.run(
        [str(SCRIPT), "cassettes", "audit", arg],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""
    assert secret not in done.stderr
    _no_part_of_jwt(done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and REDACTED in lines[0], done.stderr


def test_the_installed_scripts_usage_error_keeps_the_url_that_lost_a_slash(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [str(SCRIPT), "cassettes", "audit", "https://user:hunter2pw@host/x"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert done.stderr == f"error: https:/user:{REDACTED}@host/x: no such directory\n"


def test_the_installed_scripts_usage_error_keeps_the_bracket(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(SCRIPT), "run", "--models", "openai/x", "--formats", "bogus(password=hunter2pw)"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: unknown format 'bogus(password={REDACTED})'. ")
