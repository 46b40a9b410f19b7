"""llama-server as toolbench starts it and asks it: the command line, /props."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbench.providers import llama_server
from toolbench.providers.fake import FakeServer
from toolbench.providers.llama_server import LlamaServer, fetch_props, server_chat_template
from toolbench.providers.local_models import LOCAL_MODELS


def test_command_serves_with_jinja_one_slot_no_prompt_cache_bounded_threads_and_the_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(llama_server.THREADS_ENV, "64")  # never more than the cores
    monkeypatch.setattr(llama_server.os, "cpu_count", lambda: 2)
    spec = LOCAL_MODELS["local/smollm2-135m"]
    template = spec.chat_template_file()
    assert template is not None and template.is_file()
    server = LlamaServer(tmp_path / "m.gguf", "smollm2-135m", tmp_path / "log",
                         chat_template_file=template, binary=Path("/opt/llama-server"))  # fmt: skip
    cmd = server.command()
    assert cmd[0] == "/opt/llama-server" and "--jinja" in cmd
    assert cmd[cmd.index("--threads") + 1] == "2"
    assert cmd[cmd.index("--parallel") + 1] == "1"
    assert "--no-cache-prompt" in cmd  # a reply must not depend on the request before it
    assert cmd[cmd.index("--alias") + 1] == "smollm2-135m"
    assert cmd[cmd.index("--chat-template-file") + 1] == str(template)


@pytest.mark.parametrize(("env", "cores", "expected"), [("", 8, 2), ("1", 8, 1), ("x", 1, 1)])
def test_threads_default_to_two_and_never_exceed_the_cores(
    monkeypatch: pytest.MonkeyPatch, env: str, cores: int, expected: int
) -> None:
    monkeypatch.setenv(llama_server.THREADS_ENV, env)
    monkeypatch.setattr(llama_server.os, "cpu_count", lambda: cores)
    assert llama_server.threads() == expected


def test_smollm2_template_renders_without_tools_as_smollm2_own() -> None:
    """Text formats send no tools: the shipped template must not change their prompt."""
    jinja2 = pytest.importorskip("jinja2")
    own = (
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
        "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
        "Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
        "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
        "{{ '<|im_start|>assistant\n' }}{% endif %}"
    )  # SmolLM2-135M-Instruct's tokenizer.chat_template, from its GGUF
    path = LOCAL_MODELS["local/smollm2-135m"].chat_template_file()
    assert path is not None
    ours = jinja2.Environment().from_string(path.read_text())
    theirs = jinja2.Environment().from_string(own)
    for messages in (
        [{"role": "user", "content": "Hi"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
         {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Bye"}],
    ):  # fmt: skip
        kw = {"messages": messages, "add_generation_prompt": True}
        assert ours.render(**kw) == theirs.render(**kw)


def test_smollm2_template_offers_tools_and_returns_results_hermes_style() -> None:
    jinja2 = pytest.importorskip("jinja2")
    path = LOCAL_MODELS["local/smollm2-135m"].chat_template_file()
    assert path is not None
    env = jinja2.Environment()
    env.filters["tojson"] = json.dumps
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    call = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    text = env.from_string(path.read_text()).render(
        messages=[
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "content": '{"temp": 20}'},
        ],
        tools=[tool], add_generation_prompt=True,
    )  # fmt: skip
    assert "<tools>\n" + json.dumps(tool) + "\n</tools>" in text
    call_text = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    assert "<tool_call>\n" + call_text + "\n</tool_call>" in text
    assert '<|im_start|>user\n<tool_response>\n{"temp": 20}\n</tool_response><|im_end|>' in text
    assert text.endswith("<|im_start|>assistant\n")


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([{"role": "user", "content": "Hi"}],
         "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"),
        ([{"role": "system", "content": "Be brief."}, {"role": "user", "content": " Hi\n"},
          {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Bye"}],
         "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n"
         "<start_of_turn>model\nHello.<end_of_turn>\n"
         "<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n"),
        ([{"role": "system", "content": "Be brief."}],
         "<bos><start_of_turn>user\nBe brief.<end_of_turn>\n<start_of_turn>model\n"),
        ([{"role": "user", "content": "Weather?"},
          {"role": "assistant", "content": None, "tool_calls": [{"function": {}}]},
          {"role": "tool", "content": '{"temp": 20}'}],
         "<bos><start_of_turn>user\nWeather?<end_of_turn>\n<start_of_turn>model\n<end_of_turn>\n"
         '<start_of_turn>user\n{"temp": 20}<end_of_turn>\n<start_of_turn>model\n'),
    ],
)  # fmt: skip
def test_gemma_template_renders_gemma_turns_not_chatml(
    messages: list[dict[str, object]], expected: str
) -> None:
    """Gemma's GGUF has no template; llama-server's ChatML fallback made Gemma echo
    ``<|im_start|>`` turns. The shipped one speaks Gemma's turns, system in the first."""
    jinja2 = pytest.importorskip("jinja2")
    path = LOCAL_MODELS["local/gemma3-270m"].chat_template_file()
    assert path is not None
    template = jinja2.Environment().from_string(path.read_text())
    text = template.render(messages=messages, add_generation_prompt=True, bos_token="<bos>")
    assert text == expected


def test_server_chat_template_reads_props_beside_v1() -> None:
    with FakeServer() as fake:
        fake.props = {"chat_template": "{{ '<tool_call>' }}", "chat_template_caps": {}}
        assert server_chat_template(fake.base_url) == "{{ '<tool_call>' }}"
        fake.props = {"chat_template": 42}
        assert server_chat_template(fake.base_url) is None
        fake.props = None  # not llama-server: /props is some other JSON
        assert server_chat_template(fake.base_url) is None


def test_fetch_props_never_raises_on_an_unreachable_server() -> None:
    port = llama_server.free_port()
    assert fetch_props(f"http://127.0.0.1:{port}", timeout_s=0.5) is None
    assert fetch_props("not a url") is None
