// The official TypeScript MCP SDK's client (npm `@modelcontextprotocol/sdk`,
// installed into bench/peers/node_modules by bench/peers/setup.sh) against
// `skillkit serve`: the `initialize` handshake, tools with their annotations
// and output schema, `list_skills` (whose structuredContent the SDK itself
// validates against the tool's outputSchema), prompts, and the skills
// extension's methods through the SDK's generic request.
//
//   node mcp_client.mjs --stdio COMMAND ARG...
//   node mcp_client.mjs --http URL        (Bearer $SKILLKIT_MCP_TOKEN when set)
//
// Prints what it saw as one JSON object, for
// skillkit-cli/tests/serve_typescript.rs to check.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";

const args = process.argv.slice(2);
let transport;
if (args[0] === "--stdio") {
  transport = new StdioClientTransport({ command: args[1], args: args.slice(2), stderr: "ignore" });
} else if (args[0] === "--http") {
  const token = process.env.SKILLKIT_MCP_TOKEN;
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(args[1]), { requestInit: { headers } });
} else {
  console.error("usage: mcp_client.mjs --stdio COMMAND ARG... | --http URL");
  process.exit(2);
}

const client = new Client({ name: "skillkit-ts-peer", version: "0.0.0" });
await client.connect(transport);

/** `method` with `params` through the SDK's generic request; `{error: code}` when refused. */
async function request(method, params) {
  try {
    return await client.request({ method, params }, ResultSchema);
  } catch (e) {
    return { error: e.code ?? null, message: String(e.message) };
  }
}

const out = {};
const capabilities = client.getServerCapabilities();
out.extension = capabilities?.extensions?.["io.modelcontextprotocol/skills"] ?? null;

const { tools } = await client.listTools();
out.tools = Object.fromEntries(
  tools.map((t) => [
    t.name,
    { readOnlyHint: t.annotations?.readOnlyHint ?? null, outputSchema: t.outputSchema ?? null },
  ]),
);
// The SDK validates structuredContent against the outputSchema it listed
// (a mismatch throws here).
const listed = await client.callTool({ name: "list_skills", arguments: {} });
out.list_skills = { isError: listed.isError ?? false, structuredContent: listed.structuredContent ?? null };

const { prompts } = await client.listPrompts();
out.prompts = prompts.map((p) => ({ name: p.name, title: p.title ?? null })).sort((a, b) => (a.name < b.name ? -1 : 1));
const prompt = await client.getPrompt({ name: prompts[0].name, arguments: { arguments: "rust" } });
out.prompt = prompt.messages.map((m) => m.content.text);

const skills = await request("skills/list");
out.skills = skills.skills ?? skills;
if (Array.isArray(out.skills) && out.skills.length > 0) {
  const got = await request("skills/get", { uri: out.skills[0].uri });
  out.get_matches = JSON.stringify(got.skill) === JSON.stringify(out.skills[0]);
  const dir = await request("resources/directory/read", { uri: out.skills[0].uri.replace(/\/SKILL\.md$/, "") });
  out.directory = (dir.resources ?? []).map((r) => r.uri);
}
out.errors = {
  unknown_skill: (await request("skills/get", { uri: "skill://no/such/SKILL.md" })).error,
  no_uri: (await request("skills/get", {})).error,
  bogus_cursor: (await request("skills/list", { cursor: "bogus" })).error,
  unknown_method: (await request("skills/frobnicate", {})).error,
};

await client.close();
process.stdout.write(JSON.stringify(out, null, 1));
