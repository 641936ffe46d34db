"""greppy's MCP server through the protocol's official Python SDK (`mcp`
from PyPI), as an agent's client uses it: the client gives its roots, and
the tools keep to them.

Run by `cargo xtask test` in a venv with `mcp`:
    python mcp_sdk.py GREPPY
Exits non-zero, with the failed assertion, if the server misbehaves.
"""

import asyncio
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


async def check(greppy, work):
    root = os.path.join(work, "project")
    other = os.path.join(work, "elsewhere")
    write(os.path.join(root, "src", "a.py"), "def retry_policy():\n    return 3\n")
    write(os.path.join(other, "secret.txt"), "the secret retry_policy\n")
    os.symlink(other, os.path.join(root, "link_out"))
    roots = [types.Root(uri="file://" + root)]

    async def list_roots(ctx) -> types.ListRootsResult:
        return types.ListRootsResult(roots=roots)

    env = dict(os.environ)
    env["XDG_RUNTIME_DIR"] = os.path.join(work, "run")
    env["XDG_CACHE_HOME"] = os.path.join(work, "cache")
    env["GREPPY_NO_DAEMON"] = "1"
    # The server starts in `other`: with the client's roots, that folder
    # is outside them.
    params = StdioServerParameters(command=greppy, args=["mcp"], cwd=other, env=env)
    async with stdio_client(params) as (read, write_):
        async with ClientSession(read, write_, list_roots_callback=list_roots) as s:
            init = await s.initialize()
            assert init.server_info.name == "greppy", init.server_info
            tools = {t.name for t in (await s.list_tools()).tools}
            assert {"search", "find", "read"} <= tools, tools

            async def call(tool, **args):
                r = await s.call_tool(tool, args)
                return r.content[0].text, r.is_error

            # Relative paths start at the first root.
            text, err = await call("read", path="src/a.py", start=1, end=1)
            assert not err and text == "1: def retry_policy():\n", text
            text, err = await call("search", pattern="retry_policy")
            assert not err and text == "src/a.py:1:def retry_policy():\n", text
            for outside in [
                "/etc/passwd",
                "../../../../../../etc/passwd",
                os.path.join(other, "secret.txt"),
                "link_out/secret.txt",
            ]:
                text, err = await call("read", path=outside)
                assert err and "outside the roots" in text, (outside, text)
                assert "the secret" not in text, text
            for outside in ["/etc", "..", "link_out", other]:
                text, err = await call("search", pattern="retry_policy", path=outside)
                assert err and "outside the roots" in text, (outside, text)
            # The client's roots change: the server asks again.
            roots[:] = [types.Root(uri="file://" + other)]
            await s.send_roots_list_changed()
            text, err = await call("read", path="secret.txt")
            assert not err and text == "1: the secret retry_policy\n", text
            text, err = await call("read", path=os.path.join(root, "src", "a.py"))
            assert err and "outside the roots" in text, text
    print("greppy's MCP server keeps to the client's roots (mcp SDK)")


def main():
    with tempfile.TemporaryDirectory() as work:
        asyncio.run(check(os.path.abspath(sys.argv[1]), os.path.realpath(work)))


if __name__ == "__main__":
    main()
