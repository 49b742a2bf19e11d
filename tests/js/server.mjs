// The official JS SDK serving an echo agent over every binding it has, in 1.0 and 0.3:
// JSON-RPC at /jsonrpc, HTTP+JSON at /rest (0.3 under /rest/v1/...), gRPC (`lf.a2a.v1` and
// `a2a.v1`) on a port of its own, the card at /.well-known/agent-card.json.
//
// Usage: node server.mjs. Prints `{"url": BASE_URL}` once it listens on loopback.
// The agent: `reply ...` is answered with a message; `hold ...` works until POST /test/release
// (or a cancel); `ask ...` asks for a name, then greets it; anything else gets a task (working,
// one artifact repeating the text, completed). GET /test/holding answers once a `hold` runs.
import { randomUUID } from 'node:crypto';

import * as grpc from '@grpc/grpc-js';
import express from 'express';

import { AgentEvent, DefaultRequestHandler, InMemoryPushNotificationStore, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { createLegacyAwarePushNotificationSender } from '@a2a-js/sdk/compat/v0_3/server';
import { LegacyA2AService, legacyGrpcService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';
import { Role, TaskState } from '@a2a-js/sdk';

const compat = { legacyCompat: { enabled: true } };

function gate() {
  let open;
  const opened = new Promise((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

let holding = gate();
let release = gate();

const textPart = (text) => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' });
const textOf = (message) => message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

function agentMessage(text, { taskId = '', contextId = '' } = {}) {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const status = (state, message = undefined) => ({ state, message, timestamp: new Date().toISOString() });

class Echo {
  constructor() {
    this.canceled = new Map();
  }

  async execute(context, bus) {
    const { taskId, contextId } = context;
    const text = textOf(context.userMessage);
    const update = (state, message) =>
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(state, message), metadata: undefined }));
    if (text.startsWith('reply')) {
      bus.publish(AgentEvent.message(agentMessage(text, { contextId })));
      bus.finished();
      return;
    }
    if (!context.task) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(TaskState.TASK_STATE_SUBMITTED),
          artifacts: [],
          history: [context.userMessage],
          metadata: undefined,
        }),
      );
    }
    update(TaskState.TASK_STATE_WORKING);
    if (text.startsWith('ask')) {
      update(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage('What is your name?', { taskId, contextId }));
      bus.finished();
      return;
    }
    if (text.startsWith('hold')) {
      const canceled = { ...gate(), contextId };
      this.canceled.set(taskId, canceled);
      holding.open();
      await Promise.race([release.opened, canceled.opened]);
      this.canceled.delete(taskId);
      if (canceled.isOpen) return;
    }
    const greeting = context.task ? `Hello, ${text}!` : text;
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: { artifactId: randomUUID(), name: '', description: '', parts: [textPart(greeting)], metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    update(TaskState.TASK_STATE_COMPLETED);
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    const canceled = this.canceled.get(taskId);
    if (canceled) {
      canceled.isOpen = true;
      canceled.open();
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: canceled?.contextId ?? '',
        status: status(TaskState.TASK_STATE_CANCELED),
        metadata: undefined,
      }),
    );
    bus.finished();
  }
}

const app = express();
const http = app.listen(0, '127.0.0.1');
await new Promise((resolve) => http.once('listening', resolve));
const base = `http://127.0.0.1:${http.address().port}`;

const grpcServer = new grpc.Server();
const grpcPort = await new Promise((resolve, reject) =>
  grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
    err ? reject(err) : resolve(port),
  ),
);
const grpcTarget = `127.0.0.1:${grpcPort}`;

const interfaces = ['1.0', '0.3'].flatMap((protocolVersion) => [
  { protocolBinding: 'JSONRPC', url: `${base}/jsonrpc`, protocolVersion, tenant: '' },
  { protocolBinding: 'HTTP+JSON', url: `${base}/rest`, protocolVersion, tenant: '' },
  { protocolBinding: 'GRPC', url: grpcTarget, protocolVersion, tenant: '' },
]);

const card = {
  name: 'JS echo',
  description: 'The official JS SDK serving an echo executor.',
  supportedInterfaces: interfaces,
  provider: undefined,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'echo',
      name: 'Echo',
      description: 'Echoes.',
      tags: ['echo'],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  signatures: [],
  iconUrl: undefined,
};

const taskStore = new InMemoryTaskStore();
const pushStore = new InMemoryPushNotificationStore();
const handler = new DefaultRequestHandler(
  card,
  taskStore,
  new Echo(),
  undefined,
  pushStore,
  createLegacyAwarePushNotificationSender(pushStore),
);
const userBuilder = UserBuilder.noAuthentication;

app.get('/test/holding', async (_req, res) => {
  await holding.opened;
  res.json({ holding: true });
});
app.post('/test/release', (_req, res) => {
  release.open();
  holding = gate();
  release = gate();
  res.json({ released: true });
});
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler, ...compat }));
app.use('/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder, ...compat }));
app.use('/rest', restHandler({ requestHandler: handler, userBuilder, ...compat }));

grpcServer.addService(A2AService, grpcService({ requestHandler: handler, userBuilder }));
grpcServer.addService(LegacyA2AService, legacyGrpcService({ requestHandler: handler, userBuilder }));

process.stdout.write(`${JSON.stringify({ url: base })}\n`);

const stop = () => {
  grpcServer.forceShutdown();
  http.closeAllConnections();
  http.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
