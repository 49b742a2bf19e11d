// The official JS SDK's server as a benchmark peer: 1.0 JSON-RPC at /, task mode (working, one
// artifact repeating the text, completed), the card at /.well-known/agent-card.json, its
// in-memory task store. Usage: node peer_js_echo.mjs PORT. The SDK comes from tests/js
// (`npm ci --prefix tests/js`), reached through bench/servers/node_modules, which the
// benchmark links there.
import { randomUUID } from 'node:crypto';

import express from 'express';

import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const port = Number(process.argv[2]);
const base = `http://127.0.0.1:${port}`;
const textPart = (text) => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' });
const textOf = (message) => message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const status = (state) => ({ state, message: undefined, timestamp: new Date().toISOString() });

class TaskEcho {
  async execute(context, bus) {
    const { taskId, contextId } = context;
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
    const update = (state) =>
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(state), metadata: undefined }));
    update(TaskState.TASK_STATE_WORKING);
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: randomUUID(),
          name: '',
          description: '',
          parts: [textPart(textOf(context.userMessage))],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    update(TaskState.TASK_STATE_COMPLETED);
    bus.finished();
  }

  async cancelTask() {}
}

const card = {
  name: 'JS echo',
  description: 'The official JS SDK serving a task-mode echo.',
  supportedInterfaces: [{ protocolBinding: 'JSONRPC', url: `${base}/`, protocolVersion: '1.0', tenant: '' }],
  provider: undefined,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
  signatures: [],
  iconUrl: undefined,
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new TaskEcho());
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const http = app.listen(port, '127.0.0.1');
const stop = () => {
  http.closeAllConnections();
  http.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
