// hostsession.mjs is a long-lived MCP host built on @modelcontextprotocol/sdk
// 1.x, the TypeScript SDK most hosts run, for mcpx-fw's tests that act on
// the firewall between a host's requests (restore a server's command, kill
// a server) and watch what the host hears.
//
// Usage (run with the Node 22 that .ci/node-setup prints):
//
//	node hostsession.mjs stdio <server-command> [server-args...]
//	node hostsession.mjs http <url>
//
// It connects (initialize, the SDK's latest protocol version; the server's
// stderr passes to this process's), prints {"connected": true} and then
// reads one JSON request per line on stdin, each run at once (a request
// does not wait for the ones before it):
//
//	{"id": <n>, "op": "list"}    -> {"id": <n>, "tools": [<name>...]}
//	{"id": <n>, "op": "call", "name": <tool>, "arguments": {...}, "timeout_ms": <n>, "progress": true|false}
//	                             -> {"id": <n>, "result": ...} or {"id": <n>, "error": {"code", "message"}}
//
// Every notifications/tools/list_changed it hears prints
// {"event": "tools/list_changed"}, and every progress notification of a
// call made with "progress": true {"event": "progress", "id": <n>}. Each output is one JSON line on stdout.
// It exits 0 when stdin ends, 1 when the connection fails.
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, target, ...serverArgs] = process.argv.slice(2);
if (!['stdio', 'http'].includes(mode) || !target) {
    process.stderr.write('usage: node hostsession.mjs stdio <server-command> [server-args...] | http <url>\n');
    process.exit(2);
}

const print = v => process.stdout.write(JSON.stringify(v) + '\n');

const client = new Client({ name: 'mcpx-fw-npm-host-session', version: '1.0.0' }, { capabilities: {} });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => print({ event: 'tools/list_changed' }));

function errorJSON(err) {
    const e = { message: String(err?.message ?? err) };
    if (err?.code !== undefined) e.code = err.code;
    return e;
}

async function run(req) {
    try {
        if (req.op === 'list') {
            const res = await client.listTools();
            return { id: req.id, tools: res.tools.map(t => t.name) };
        }
        if (req.op === 'call') {
            const options = { timeout: req.timeout_ms ?? 20000 };
            if (req.progress) options.onprogress = () => print({ event: 'progress', id: req.id });
            const result = await client.callTool({ name: req.name, arguments: req.arguments ?? {} }, undefined, options);
            return { id: req.id, result };
        }
        return { id: req.id, error: { message: `unknown op ${req.op}` } };
    } catch (err) {
        return { id: req.id, error: errorJSON(err) };
    }
}

const transport = mode === 'stdio'
    ? new StdioClientTransport({ command: target, args: serverArgs, stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(target));
try {
    await client.connect(transport);
} catch (err) {
    print({ connected: false, error: errorJSON(err) });
    process.exit(1);
}
print({ connected: true });

const pending = [];
for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === '') continue;
    pending.push(run(JSON.parse(line)).then(print));
}
await Promise.all(pending);
await client.close();
process.exit(0);
