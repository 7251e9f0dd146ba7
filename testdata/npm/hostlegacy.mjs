// hostlegacy.mjs is a minimal MCP host built on @modelcontextprotocol/sdk
// 1.x, the TypeScript SDK most hosts run, used by mcpx-fw's tests as a real
// third-party host over stdio. Its stdio transport reads the server's
// stdout as the protocol says: one message per line.
//
// Usage (run with the Node 22 that .ci/node-setup prints):
//
//	node hostlegacy.mjs <json-calls> <server-command> [server-args...]
//
// It spawns the server, connects (initialize, the SDK's latest protocol
// version), declares the sampling capability and answers every sampling
// request with one fixed assistant text, then makes the calls of
// <json-calls>, an array of
//
//	{"name": <tool>, "arguments": {...}, "wait": true|false, "progress": true|false,
//	 "reset_on_progress": true|false, "timeout_ms": <n>}
//
// in order: a call with "wait": false is left in flight while the next
// ones are made; "progress" asks for progress (the SDK then sends a
// progress token); "reset_on_progress" has the SDK start the call's
// timeout again at each progress it hears (resetTimeoutOnProgress);
// "timeout_ms" bounds the call (default 20000). Every
// call is awaited at the end. The SDK numbers its requests from 0
// (initialize), so the calls have the ids 1, 2, ... in order. It prints
// exactly one JSON line on stdout:
//
//	{"calls": [{"result"|"error": ..., "progress": [<params>...]}...], "sampled": <n>, "samplingRequests": [<params>...], "unreadable": [<message>...]}
//
// progress lists the progress notifications a call that asked for them
// heard.
// unreadable lists what the transport reported it could not read (a line
// that is not one JSON-RPC message). The exit code is 0 unless the
// connection failed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

function usage(msg) {
    process.stderr.write(`hostlegacy: ${msg}\nusage: node hostlegacy.mjs <json-calls> <server-command> [server-args...]\n`);
    process.exit(2);
}

const [rawCalls, command, ...serverArgs] = process.argv.slice(2);
if (!rawCalls || !command) usage('missing arguments');
let calls;
try {
    calls = JSON.parse(rawCalls);
} catch (e) {
    usage(`<json-calls> is not JSON: ${e.message}`);
}

const samplingRequests = [];
const unreadable = [];
const client = new Client({ name: 'mcpx-fw-npm-host-legacy', version: '1.0.0' }, { capabilities: { sampling: {} } });
client.setRequestHandler(CreateMessageRequestSchema, async request => {
    samplingRequests.push(request.params);
    return { role: 'assistant', content: { type: 'text', text: 'npm-host-legacy says hi' }, model: 'npm-host-legacy' };
});
client.onerror = err => unreadable.push(String(err?.message ?? err));

function errorJSON(err) {
    const e = { message: String(err?.message ?? err) };
    if (err?.code !== undefined) e.code = err.code;
    if (err?.data !== undefined) e.data = err.data;
    return e;
}

// call makes one call and settles to its outcome.
function call(c) {
    const options = { timeout: c.timeout_ms ?? 20000, resetTimeoutOnProgress: c.reset_on_progress === true };
    const progress = [];
    if (c.progress) options.onprogress = p => progress.push(p);
    return client.callTool({ name: c.name, arguments: c.arguments ?? {} }, undefined, options).then(
        result => ({ result, progress }),
        err => ({ error: errorJSON(err), progress })
    );
}

let code = 0;
let line;
try {
    await client.connect(new StdioClientTransport({ command, args: serverArgs, stderr: 'inherit' }));
    const outcomes = [];
    for (const c of calls) {
        const outcome = call(c);
        outcomes.push(outcome);
        if (c.wait !== false) await outcome;
    }
    line = { calls: await Promise.all(outcomes) };
} catch (err) {
    code = 1;
    line = { error: errorJSON(err) };
}
Object.assign(line, { sampled: samplingRequests.length, samplingRequests, unreadable });
process.stdout.write(JSON.stringify(line) + '\n');
await client.close().catch(() => {});
process.exit(code);
