"""The screen before detect-secrets' plugins (``secret_shapes.may_match_plugin``).

A text the screen passes over is never shown to the plugins, so the screen must hold
every text any plugin can find something in. It was derived by hand from the plugins'
patterns: the patterns are pinned here (a detect-secrets upgrade that changes one fails
:func:`test_the_plugin_patterns_the_screen_was_derived_from`), each plugin's own kind of
secret passes it, and random texts built from the pieces those patterns are made of
never hold a finding the screen missed.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.secret_shapes import (
    _SKIPPED_PLUGINS,
    _detect_secrets_in,
    find_shapes,
    may_match_plugin,
)

PINNED = "fe54e30c"
"""First hex digits of the digest of every plugin's name and patterns (and the keyword
detector's word list) that ``_MAY_MATCH_PLUGIN`` was derived from."""

# One secret each plugin finds (none of toolbench's own shapes needed to find it).
EXAMPLES = {
    "AWS Access Key": "id AKIAIOSFODNN7EXAMPLQ here",
    "Artifactory Credentials": 'x="AKCp8jQcDsNoTarealtok3n"',
    "Azure Storage Account access key": "AccountKey=" + "a" * 88,
    "Basic Auth Credentials": "at https://admin:hunter22x@db.example/",
    "Cloudant Credentials": "cloudant_password: '" + "a" * 24 + "'",
    "Discord Bot Token": "MTE" + "a" * 21 + ".GAbCdE." + "b" * 27,
    "GitHub Token": "ghp_" + "A1b2" * 9,
    "GitLab Token": "glpat-" + "x1Y2" * 5,
    "IBM COS HMAC Credentials": "secret_access_key = '" + "ab12" * 12 + "'",
    "IBM Cloud IAM Key": "ibm_cloud_iam_api_key: '" + "Ab-1" * 11 + "'",
    "JSON Web Token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
    "Mailchimp Access Key": "0123456789abcdef" * 2 + "-us12",
    "NPM tokens": "//registry.npmjs.org/:_authToken=npm_abcdefghij",
    "Private Key": "-----BEGIN RSA PRIVATE KEY-----",
    "PyPI Token": "pypi-AgEIcHlwaS5vcmc" + "A" * 70,
    "Secret Keyword": "password = 'hunter22x'",
    "SendGrid API Key": "SG." + "a" * 22 + "." + "b" * 43,
    "Slack Token": "xoxb-1234-abcd",
    "SoftLayer Credentials": "softlayer_api_key: " + "a1" * 32,
    "Square OAuth Secret": "sq0csp-" + "A" * 43,
    "Stripe Access Key": "sk_live_" + "a1B2" * 6,
    "Telegram Bot Token": "123456789:" + "A" * 35,
    "Twilio API Key": "SK" + "a1" * 16,
}


FOUND_AS = {"GitHub Token": "github token"}
"""Plugins whose match toolbench's own shape reports: detect-secrets' GitHub pattern
captures only its prefix (``ghp``), too short to be kept."""


def _plugins() -> list[tuple[str, tuple[str, ...]]]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.keyword import DENYLIST

    out = []
    for kind, cls in sorted(get_mapping_from_secret_type_to_class().items()):
        if kind in _SKIPPED_PLUGINS:
            continue
        patterns = tuple(p.pattern for p in getattr(cls, "denylist", ()) or ())
        out.append((kind, patterns if kind != "Secret Keyword" else tuple(DENYLIST)))
    return out


def test_the_plugin_patterns_the_screen_was_derived_from() -> None:
    digest = hashlib.sha256(repr(_plugins()).encode()).hexdigest()
    assert digest.startswith(PINNED), (
        f"detect-secrets' plugins changed (digest {digest[:8]}): check that "
        "secret_shapes._MAY_MATCH_PLUGIN still holds every text they can match, add an "
        "example below for a new plugin, then pin the new digest"
    )
    assert {kind for kind, _ in _plugins()} == set(EXAMPLES)


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_each_plugins_secret_passes_the_screen_and_is_found(kind: str) -> None:
    text = EXAMPLES[kind]
    assert may_match_plugin(text)
    found_as = FOUND_AS.get(kind, kind.lower())
    if kind not in FOUND_AS:
        assert found_as in {s.kind for s in _detect_secrets_in(text)}
    assert found_as in {s.kind for s in find_shapes(text)}


@pytest.mark.parametrize(
    "line",
    [
        "toolbench gate: Missing argument 'run'. (see 'toolbench gate --help')",
        "--concurrency: must be at least 1",
        "unknown format 'nosuch'. Available: claude-xml, deepseek, native, react, xml",
        "toolbench scenarios: No such command 'nosuch'. (see 'toolbench scenarios --help')",
    ],
)
def test_a_usage_line_of_toolbench_words_is_not_scanned(line: str) -> None:
    assert not may_match_plugin(line)


PIECES = st.sampled_from(
    [
        "key", "pass", "pw", "secret", "token", "auth", "://", "eyJ", "xox", "-", "_", ".",
        ":", "=", "@", "'", '"', " ", "\n", "/", "AKC", "AP1", "AKIA", "SG", "SK", "AC",
        "sq0csp-", "sk_live_", "glpat-", "ghp_", "pypi-", "us1", "BEGIN ", "PRIVATE KEY",
        "aws", "cloudant", "ibm", "12345678", "a1b2c3d4", "ABCDEF12", "zz", "0",
    ]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_no_text_the_screen_passes_over_holds_a_finding(text: str) -> None:
    if not may_match_plugin(text):
        assert list(_detect_secrets_in(text)) == []
