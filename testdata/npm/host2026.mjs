// host2026.mjs is a minimal MCP host built on @modelcontextprotocol/client 2.x,
// used by mcpx-fw's tests as a real third-party 2026-07-28 peer.
//
// Usage (run with the Node 22 that .ci/node-setup prints):
//
//	node host2026.mjs [--mode pin|auto|legacy] <tool> <json-args> <server-command> [server-args...]
//
// It spawns the server over stdio, connects (default --mode pin: exactly
// protocol 2026-07-28 via server/discover, failing if the server does not
// offer it; auto: probe, else fall back to initialize; legacy: 2025
// initialize only), declares the sampling capability, answers every
// sampling request with one fixed assistant text, calls <tool> with the
// parsed <json-args>, and prints exactly one JSON line on stdout:
//
//	{"result": <CallToolResult>, "sampled": <n>, "protocolVersion": "<negotiated>", "era": "modern|legacy", "samplingRequests": [<params>...]}
//
// or, when anything fails, {"error": {...}, "sampled": <n>, ...}. The exit
// code is 0 after a result and 1 after an error. On a 2026-07-28
// connection sampling arrives inside input_required results and the SDK
// fulfils it through the same handler; server-initiated requests on such a
// connection are dropped by the SDK (reported under "dropped").
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const ANSWER = {
    role: 'assistant',
    content: { type: 'text', text: 'npm-host says hi' },
    model: 'npm-host'
};

function usage(msg) {
    process.stderr.write(`host2026: ${msg}\nusage: node host2026.mjs [--mode pin|auto|legacy] <tool> <json-args> <server-command> [server-args...]\n`);
    process.exit(2);
}

let argv = process.argv.slice(2);
let mode = 'pin';
if (argv[0] === '--mode') {
    mode = argv[1];
    argv = argv.slice(2);
}
if (!['pin', 'auto', 'legacy'].includes(mode)) usage(`unknown mode ${JSON.stringify(mode)}`);
const [tool, rawArgs, command, ...serverArgs] = argv;
if (!tool || rawArgs === undefined || !command) usage('missing arguments');
let toolArgs;
try {
    toolArgs = JSON.parse(rawArgs);
} catch (e) {
    usage(`<json-args> is not JSON: ${e.message}`);
}

const samplingRequests = [];
const dropped = [];
const client = new Client(
    { name: 'mcpx-fw-npm-host', version: '1.0.0' },
    {
        capabilities: { sampling: {} },
        versionNegotiation: { mode: mode === 'pin' ? { pin: '2026-07-28' } : mode }
    }
);
client.setRequestHandler('sampling/createMessage', async request => {
    samplingRequests.push(request.params);
    return ANSWER;
});
client.onerror = err => dropped.push(String(err?.message ?? err));

const transport = new StdioClientTransport({ command, args: serverArgs, stderr: 'inherit' });

function report() {
    const out = {
        sampled: samplingRequests.length,
        protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
        era: client.getProtocolEra() ?? null,
        samplingRequests
    };
    if (dropped.length) out.dropped = dropped;
    return out;
}

function errorJSON(err) {
    const e = { message: String(err?.message ?? err) };
    if (err?.name) e.name = err.name;
    if (err?.code !== undefined) e.code = err.code;
    if (err?.data !== undefined) e.data = err.data;
    return e;
}

let code = 0;
let line;
try {
    await client.connect(transport);
    const result = await client.callTool({ name: tool, arguments: toolArgs });
    line = { result, ...report() };
} catch (err) {
    code = 1;
    line = { error: errorJSON(err), ...report() };
}
process.stdout.write(JSON.stringify(line) + '\n');
await client.close().catch(() => {});
process.exit(code);
