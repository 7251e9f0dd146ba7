// host2026.mjs is a minimal MCP host built on @modelcontextprotocol/client 2.x,
// used by mcpx-fw's tests as a real third-party 2026-07-28 peer.
//
// Usage (run with the Node 22 that .ci/node-setup prints):
//
//	node host2026.mjs [--mode pin|auto|legacy] [--elicit accept|decline|cancel|extra]
//	    [--roots <json-array>] <tool> <json-args> <server-command> [server-args...]
//	node host2026.mjs [same options] --calls <json-array> <server-command> [server-args...]
//
// It spawns the server over stdio, connects (default --mode pin: exactly
// protocol 2026-07-28 via server/discover, failing if the server does not
// offer it; auto: probe, else fall back to initialize; legacy: 2025
// initialize only), declares the sampling capability, answers every
// sampling request with one fixed assistant text, calls <tool> with the
// parsed <json-args>, and prints exactly one JSON line on stdout:
//
//	{"result": <CallToolResult>, "sampled": <n>, "protocolVersion": "<negotiated>", "era": "modern|legacy", "samplingRequests": [<params>...],
//	 "elicited": <n>, "elicitRequests": [<params>...], "rootsAsked": <n>}
//
// With --elicit it also declares elicitation (form and url) and answers
// every elicitation request as told: accept (a form with content built from
// its schema, see formContent; a URL accepted), decline, cancel, or extra
// (accept with one key the schema does not have: an answer that breaks
// it). With --roots it declares roots (listChanged) and answers roots/list
// with the given array of roots.
//
// With --calls [{"name": <tool>, "arguments": {...}, "elicit": <how>}, ...]
// it makes each call in turn on the one connection (each answered as its
// "elicit" says, else as --elicit does) and prints instead
//
//	{"calls": [{"result"|"error": ..., "sampled": <n>, "elicited": <n>, "rootsAsked": <n>}...], "protocolVersion": ..., ...}
//
// with what the host was asked during each call; the exit code is 0 unless
// the connection failed.
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
let elicit = null;
let roots = null;
for (;;) {
    if (argv[0] === '--mode') mode = argv[1];
    else if (argv[0] === '--elicit') elicit = argv[1];
    else if (argv[0] === '--roots') {
        try {
            roots = JSON.parse(argv[1]);
        } catch (e) {
            usage(`--roots is not JSON: ${e.message}`);
        }
    } else break;
    argv = argv.slice(2);
}
if (!['pin', 'auto', 'legacy'].includes(mode)) usage(`unknown mode ${JSON.stringify(mode)}`);
if (elicit !== null && !['accept', 'decline', 'cancel', 'extra'].includes(elicit)) usage(`unknown --elicit ${JSON.stringify(elicit)}`);
const elicitDefault = elicit;
// calls is the list of tool calls to make, in order: one from <tool>
// <json-args>, or several from --calls.
let calls;
const multi = argv[0] === '--calls';
if (multi) {
    try {
        calls = JSON.parse(argv[1]);
    } catch (e) {
        usage(`--calls is not JSON: ${e.message}`);
    }
    argv = argv.slice(2);
} else {
    const [tool, rawArgs] = argv;
    if (!tool || rawArgs === undefined) usage('missing arguments');
    try {
        calls = [{ name: tool, arguments: JSON.parse(rawArgs) }];
    } catch (e) {
        usage(`<json-args> is not JSON: ${e.message}`);
    }
    argv = argv.slice(2);
}
const [command, ...serverArgs] = argv;
if (!command) usage('missing arguments');

// formValue is the answer to one field of a form: its default, else its
// first choice, else a fixed value of its type and format. Every host of
// the tests answers alike (cmd/mcpx-fw elicitAnswer), so a tool's result is
// the same whichever host asked.
function formValue(prop) {
    if (prop.default !== undefined) return prop.default;
    if (prop.type === 'array') {
        const items = prop.items ?? {};
        const first = items.enum?.[0] ?? items.anyOf?.[0]?.const ?? items.oneOf?.[0]?.const;
        return first === undefined ? [] : [first];
    }
    const first = prop.enum?.[0] ?? prop.oneOf?.[0]?.const ?? prop.anyOf?.[0]?.const;
    if (first !== undefined) return first;
    switch (prop.type) {
        case 'boolean':
            return true;
        case 'integer':
        case 'number':
            return prop.minimum ?? 1;
    }
    return { email: 'host@example.com', uri: 'https://example.com/', date: '2000-01-01', 'date-time': '2000-01-01T00:00:00Z' }[prop.format] ?? 'host';
}

function formContent(schema) {
    const content = {};
    for (const [name, prop] of Object.entries(schema?.properties ?? {})) content[name] = formValue(prop);
    return content;
}

const samplingRequests = [];
const elicitRequests = [];
let rootsAsked = 0;
const dropped = [];
const capabilities = { sampling: {} };
if (elicit !== null) capabilities.elicitation = { form: {}, url: {} };
if (roots !== null) capabilities.roots = { listChanged: true };
const client = new Client(
    { name: 'mcpx-fw-npm-host', version: '1.0.0' },
    {
        capabilities,
        versionNegotiation: { mode: mode === 'pin' ? { pin: '2026-07-28' } : mode }
    }
);
client.setRequestHandler('sampling/createMessage', async request => {
    samplingRequests.push(request.params);
    return ANSWER;
});
if (elicit !== null) {
    client.setRequestHandler('elicitation/create', async request => {
        const params = request.params;
        elicitRequests.push(params);
        if (elicit === 'decline' || elicit === 'cancel') return { action: elicit };
        if (params.mode === 'url') return { action: 'accept' };
        const content = formContent(params.requestedSchema);
        if (elicit === 'extra') content.notInTheSchema = 'extra';
        return { action: 'accept', content };
    });
}
if (roots !== null) {
    client.setRequestHandler('roots/list', async () => {
        rootsAsked++;
        return { roots };
    });
}
client.onerror = err => dropped.push(String(err?.message ?? err));

const transport = new StdioClientTransport({ command, args: serverArgs, stderr: 'inherit' });

function report() {
    const out = {
        sampled: samplingRequests.length,
        protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
        era: client.getProtocolEra() ?? null,
        samplingRequests,
        elicited: elicitRequests.length,
        elicitRequests,
        rootsAsked
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

// callEach makes every call of --calls, each answered as its own "elicit"
// says (else as --elicit does), and reports each with what the host was
// asked during it.
async function callEach() {
    const out = [];
    for (const call of calls) {
        const before = { sampled: samplingRequests.length, elicited: elicitRequests.length, rootsAsked };
        elicit = call.elicit ?? elicitDefault;
        const one = {};
        try {
            one.result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
        } catch (err) {
            one.error = errorJSON(err);
        }
        one.sampled = samplingRequests.length - before.sampled;
        one.elicited = elicitRequests.length - before.elicited;
        one.rootsAsked = rootsAsked - before.rootsAsked;
        out.push(one);
    }
    return out;
}

let code = 0;
let line;
try {
    await client.connect(transport);
    if (multi) {
        line = { calls: await callEach(), ...report() };
    } else {
        const result = await client.callTool({ name: calls[0].name, arguments: calls[0].arguments });
        line = { result, ...report() };
    }
} catch (err) {
    code = 1;
    line = { error: errorJSON(err), ...report() };
}
process.stdout.write(JSON.stringify(line) + '\n');
await client.close().catch(() => {});
process.exit(code);
