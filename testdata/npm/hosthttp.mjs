// hosthttp.mjs is a minimal MCP host built on @modelcontextprotocol/sdk
// 1.x over streamable HTTP, used by mcpx-fw's tests as a real third-party
// HTTP host that declares roots.
//
// Usage (run with the Node 22 that .ci/node-setup prints):
//
//	node hosthttp.mjs [--hold-get-ms <n>] <url>
//
// It connects to <url> (initialize at the SDK's latest protocol version),
// declares roots and answers roots/list with one root, file:///srv/e2e,
// and lists the tools. With --hold-get-ms the standalone event stream (the
// GET the SDK opens once the session is initialized) is opened only once
// the tools are listed and n ms more have passed: a host whose stream
// opens late, after a server already asked it something. It then waits
// until it has been asked for its roots once, at most 15 s, and prints
// one JSON line on stdout:
//
//	{"tools": <n>, "rootsAsked": <n>, "errors": [<message>...]}
//
// The exit code is 0 unless the connection failed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

let argv = process.argv.slice(2);
let holdMs = null;
if (argv[0] === '--hold-get-ms') {
    holdMs = Number(argv[1]);
    argv = argv.slice(2);
}
const [url] = argv;
if (!url || (holdMs !== null && !(holdMs >= 0))) {
    process.stderr.write('usage: node hosthttp.mjs [--hold-get-ms <n>] <url>\n');
    process.exit(2);
}

let listed;
const toolsListed = new Promise(resolve => (listed = resolve));
const fetchHeld = async (input, init) => {
    if (holdMs !== null && (init?.method ?? 'GET') === 'GET') {
        await toolsListed;
        await new Promise(resolve => setTimeout(resolve, holdMs));
    }
    return fetch(input, init);
};

let rootsAsked = 0;
let asked;
const askedOnce = new Promise(resolve => (asked = resolve));
const errors = [];
const client = new Client({ name: 'mcpx-fw-npm-host-http', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
client.setRequestHandler(ListRootsRequestSchema, async () => {
    rootsAsked++;
    asked();
    return { roots: [{ uri: 'file:///srv/e2e' }] };
});
client.onerror = err => errors.push(String(err?.message ?? err));

try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchHeld }));
    const { tools } = await client.listTools();
    listed();
    await Promise.race([askedOnce, new Promise(resolve => setTimeout(resolve, 15000))]);
    process.stdout.write(JSON.stringify({ tools: tools.length, rootsAsked, errors }) + '\n');
    await client.close().catch(() => {});
    process.exit(0);
} catch (err) {
    process.stdout.write(JSON.stringify({ error: String(err?.message ?? err), rootsAsked, errors }) + '\n');
    process.exit(1);
}
