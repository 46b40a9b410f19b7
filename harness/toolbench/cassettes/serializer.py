"""The cassette file format: vcrpy's YAML with JSON bodies decoded, so cassettes read and
diff like data."""

from __future__ import annotations

import json
from typing import Any

import yaml
from vcr.serialize import CASSETTE_FORMAT_VERSION as VERSION


def _to_json(s: Any) -> Any:
    if not isinstance(s, str) or s.strip()[:1] not in ("{", "["):
        return None
    try:
        return json.loads(s)
    except ValueError:
        return None


# libyaml's safe dumper/loader when present: the pure-Python ones cost ~8 ms a cassette.
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ReadableSerializer:
    """YAML with JSON bodies decoded into data (and encoded back, compactly, on load)."""

    @staticmethod
    def serialize(data: dict[str, Any]) -> str:
        for it in data.get("interactions", []):
            req, resp = it["request"], it["response"]
            obj = _to_json(req.get("body"))
            if obj is not None:
                req["body"] = {"json": obj}
            rbody = resp.get("body", {})
            obj = _to_json(rbody.get("string"))
            if obj is not None:
                resp["body"] = {"json": obj}
        return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        data: dict[str, Any] = yaml.load(text, Loader=_Loader) or {}
        if isinstance(data, dict) and data.get("version", VERSION) != VERSION:
            # vcrpy replays any version as if it were its own: a newer layout would be
            # read wrong without a word. The persister reports it as unreadable.
            raise ValueError(
                f"version {data['version']!r} is not a cassette version this toolbench"
                f" reads (it reads version {VERSION})"
            )
        for it in data.get("interactions", []):
            req, resp = it["request"], it["response"]
            if isinstance(req.get("body"), dict) and "json" in req["body"]:
                req["body"] = json.dumps(req["body"]["json"], ensure_ascii=False)
            if isinstance(resp.get("body"), dict) and "json" in resp["body"]:
                resp["body"] = {"string": json.dumps(resp["body"]["json"], ensure_ascii=False)}
        return data
