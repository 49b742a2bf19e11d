// The official JS SDK's client driving scenarios against A2A servers.
//
// Usage: node client.mjs BASE_URL BINDING VERSION SCENARIO [WEBHOOK_URL] runs one scenario;
// without arguments, each line of stdin names one to run after the other, as the JSON array
// [BASE_URL, BINDING, VERSION, SCENARIO, WEBHOOK_URL?] (one node process for many scenarios).
// The card is resolved from BASE_URL and narrowed to its one interface of BINDING and VERSION,
// so the SDK's client speaks exactly that. Progress lines `{"step": NAME}` tell the caller when
// to act on the server; a scenario's last line is `{"result": ...}` or `{"error": {...}}`.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';

import { Role, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import * as errors from '@a2a-js/sdk/errors';

// The scenario running now (set by `runScenario`).
let baseUrl, binding, version, webhook;
const compat = { legacyCompat: { enabled: true } };

const emit = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const step = (name) => emit({ step: name });

async function resolveCard() {
  return new DefaultAgentCardResolver(compat).resolve(baseUrl);
}

async function connect() {
  const card = await resolveCard();
  const chosen = card.supportedInterfaces.filter(
    (i) => i.protocolBinding === binding && i.protocolVersion === version,
  );
  if (chosen.length !== 1) {
    throw new Error(`the card lists ${chosen.length} ${binding} ${version} interfaces`);
  }
  card.supportedInterfaces = chosen;
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory(compat),
      new RestTransportFactory(compat),
      new GrpcTransportFactory(compat),
    ],
  });
  return factory.createFromAgentCard(card);
}

function message(text, { taskId = '', contextId = '' } = {}) {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function request(text, { returnImmediately = false, push = undefined, ...ids } = {}) {
  return {
    tenant: '',
    message: message(text, ids),
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: push,
      returnImmediately,
    },
    metadata: undefined,
  };
}

// What the tests compare: plain JSON with state names instead of enum numbers.
const stateName = (state) => TaskState[state];
const textOf = (parts) =>
  parts.map((p) => (p.content?.$case === 'text' ? p.content.value : `<${p.content?.$case}>`)).join('');

function taskView(task) {
  return {
    kind: 'task',
    id: task.id,
    contextId: task.contextId,
    state: stateName(task.status?.state),
    artifacts: task.artifacts.map((a) => textOf(a.parts)),
    history: task.history.map((m) => textOf(m.parts)),
  };
}

function resultView(result) {
  if ('messageId' in result) {
    return { kind: 'message', role: Role[result.role], text: textOf(result.parts) };
  }
  return taskView(result);
}

function eventView(event) {
  const { $case, value } = event.payload;
  switch ($case) {
    case 'task':
      return taskView(value);
    case 'message':
      return resultView(value);
    case 'statusUpdate':
      return { kind: 'status-update', taskId: value.taskId, state: stateName(value.status?.state) };
    case 'artifactUpdate':
      return { kind: 'artifact-update', taskId: value.taskId, text: textOf(value.artifact.parts) };
    default:
      return { kind: String($case) };
  }
}

const configView = (c) => ({ taskId: c.taskId, id: c.id, url: c.url, token: c.token });

async function collect(stream, onEvent = () => {}) {
  const events = [];
  for await (const event of stream) {
    events.push(eventView(event));
    onEvent(events.length);
  }
  return events;
}

async function startTask(client, text) {
  const task = await client.sendMessage(request(text, { returnImmediately: true }));
  if (!('id' in task) || 'messageId' in task) throw new Error(`not a task: ${JSON.stringify(task)}`);
  return task;
}

const WEBHOOK = 'https://hooks.example.com/a2a';

async function addPushConfig(client, id = 'hook-1') {
  const task = await startTask(client, 'never ends');
  const config = { tenant: '', id, taskId: task.id, url: WEBHOOK, token: 't', authentication: undefined };
  return client.createTaskPushNotificationConfig(config);
}

// Each error class the SDK models, by the name the tests compare.
const ERROR_CLASSES = [
  'TaskNotFoundError',
  'TaskNotCancelableError',
  'UnsupportedOperationError',
  'PushNotificationNotSupportedError',
  'ContentTypeNotSupportedError',
  'InvalidAgentResponseError',
  'ExtendedAgentCardNotConfiguredError',
  'VersionNotSupportedError',
  'RequestMalformedError',
];

async function expectError(call) {
  try {
    const result = await call();
    return { unexpected: 'no error', result: result === undefined ? null : result };
  } catch (err) {
    const known = (e) => ERROR_CLASSES.find((name) => e instanceof errors[name]);
    // The JSON-RPC stream transports throw a plain Error whose cause is the typed one.
    if (known(err)) return known(err);
    if (known(err?.cause)) return `${known(err.cause)} (cause)`;
    return `${err?.constructor?.name}: ${err?.message}`;
  }
}

const SCENARIOS = {
  // The SDK as its README shows it: the default factory picks from the card, partial objects.
  async defaults() {
    const client = await new ClientFactory().createFromUrl(baseUrl);
    const task = await client.sendMessage({
      message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'hello' } }] },
    });
    return { interface: [client.transport.protocolName, client.protocolVersion], task: taskView(task) };
  },

  async card() {
    const card = await resolveCard();
    return {
      name: card.name,
      streaming: card.capabilities?.streaming,
      pushNotifications: card.capabilities?.pushNotifications,
      interfaces: card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion]),
    };
  },

  async send(client) {
    return resultView(await client.sendMessage(request('hello')));
  },

  async sendReply(client) {
    return resultView(await client.sendMessage(request('reply hi')));
  },

  async stream(client) {
    return collect(client.sendMessageStream(request('hello')));
  },

  // A stream answered with a message, and one whose task stops to ask for input.
  async streamEnds(client) {
    return {
      reply: await collect(client.sendMessageStream(request('reply hi'))),
      ask: await collect(client.sendMessageStream(request('ask me'))),
    };
  },

  async getTask(client) {
    const sent = await client.sendMessage(request('hello'));
    return taskView(await client.getTask({ tenant: '', id: sent.id, historyLength: 1 }));
  },

  // A task with three messages (question, answer, and the first), read back with each limit.
  async historyLengths(client) {
    const asked = await client.sendMessage(request('ask me'));
    await client.sendMessage(request('Ada', { taskId: asked.id, contextId: asked.contextId }));
    const read = async (historyLength) =>
      (await client.getTask({ tenant: '', id: asked.id, historyLength })).history.map((m) => textOf(m.parts));
    return { unset: await read(undefined), 0: await read(0), 2: await read(2) };
  },

  // Each kind of part, as the agent's task history keeps it.
  async parts(client) {
    const sent = request('hello');
    sent.message.parts.push(
      { content: { $case: 'data', value: { k: [1, 'two'] } }, metadata: undefined, filename: '', mediaType: 'application/json' },
      { content: { $case: 'url', value: 'https://files.example/a.txt' }, metadata: undefined, filename: 'a.txt', mediaType: 'text/plain' },
      { content: { $case: 'raw', value: Buffer.from('bytes') }, metadata: undefined, filename: 'b.bin', mediaType: 'application/octet-stream' },
    );
    const task = await client.sendMessage(sent);
    const fetched = await client.getTask({ tenant: '', id: task.id });
    return fetched.history[0].parts.map((p) => ({
      kind: p.content.$case,
      value: p.content.$case === 'raw' ? Buffer.from(p.content.value).toString() : p.content.value,
      filename: p.filename,
      mediaType: p.mediaType,
    }));
  },

  async listTasks(client) {
    const sent = await client.sendMessage(request('hello'));
    const listed = await client.listTasks({
      tenant: '',
      contextId: sent.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    return { sent: sent.id, listed: listed.tasks.map((t) => t.id) };
  },

  async cancel(client) {
    const started = await startTask(client, 'never ends');
    step('started');
    return taskView(await client.cancelTask({ tenant: '', id: started.id, metadata: undefined }));
  },

  async resubscribe(client) {
    const started = await startTask(client, 'gated stream');
    step('started');
    const events = await collect(client.resubscribeTask({ tenant: '', id: started.id }), (n) => {
      if (n === 1) step('subscribed');
    });
    return { taskId: started.id, events };
  },

  async inputRequired(client) {
    const asked = await client.sendMessage(request('ask me'));
    const answer = request('Ada', { taskId: asked.id, contextId: asked.contextId });
    const subscriber = await connect();
    let done;
    const events = await collect(subscriber.resubscribeTask({ tenant: '', id: asked.id }), async (n) => {
      if (n === 1) done = client.sendMessage(answer);
    });
    return { asked: taskView(asked), done: resultView(await done), events };
  },

  async pushConfigs(client) {
    const created = await addPushConfig(client);
    const ids = { tenant: '', taskId: created.taskId, id: created.id };
    const fetched = await client.getTaskPushNotificationConfig(ids);
    const ofTask = { tenant: '', taskId: created.taskId, pageSize: 0, pageToken: '' };
    const listed = await client.listTaskPushNotificationConfig(ofTask);
    await client.deleteTaskPushNotificationConfig(ids);
    const after = await client.listTaskPushNotificationConfig(ofTask);
    return {
      created: configView(created),
      fetched: configView(fetched),
      listed: listed.configs.map(configView),
      after: after.configs.map(configView),
    };
  },

  async pushConfigWithoutId(client) {
    const created = await addPushConfig(client, '');
    const fetched = await client.getTaskPushNotificationConfig({ tenant: '', taskId: created.taskId, id: created.id });
    return { created: configView(created), fetched: configView(fetched) };
  },

  async sendWithWebhook(client) {
    const push = { tenant: '', id: '', taskId: '', url: webhook, token: 'secret', authentication: undefined };
    return resultView(await client.sendMessage(request('hello', { push })));
  },

  async extendedCard(client) {
    const card = await client.getAgentCard();
    return { name: card.name, description: card.description };
  },

  async unknownTask(client) {
    return {
      get: await expectError(() => client.getTask({ tenant: '', id: 'no-such-task' })),
      cancel: await expectError(() => client.cancelTask({ tenant: '', id: 'no-such-task' })),
      resubscribe: await expectError(() => collect(client.resubscribeTask({ tenant: '', id: 'no-such-task' }))),
      pushConfig: await expectError(() =>
        client.getTaskPushNotificationConfig({ tenant: '', taskId: 'no-such-task', id: 'c-1' }),
      ),
    };
  },

  async finishedTask(client) {
    const done = await client.sendMessage(request('hello'));
    return {
      cancel: await expectError(() => client.cancelTask({ tenant: '', id: done.id })),
      more: await expectError(() =>
        client.sendMessage(request('more', { taskId: done.id, contextId: done.contextId })),
      ),
      // The streaming methods, refused before their first event.
      subscribe: await expectError(() => collect(client.resubscribeTask({ tenant: '', id: done.id }))),
      streamMore: await expectError(() =>
        collect(client.sendMessageStream(request('more', { taskId: done.id, contextId: done.contextId }))),
      ),
    };
  },
};

async function runScenario([url, bindingName, versionName, scenario, webhookUrl]) {
  [baseUrl, binding, version, webhook] = [url, bindingName, versionName, webhookUrl];
  try {
    const run = SCENARIOS[scenario];
    if (!run) throw new Error(`no scenario ${scenario}; known: ${Object.keys(SCENARIOS).join(', ')}`);
    const standalone = scenario === 'card' || scenario === 'defaults';
    emit({ result: await run(standalone ? null : await connect()) });
  } catch (err) {
    emit({ error: { name: err?.constructor?.name, message: String(err?.message ?? err), stack: err?.stack } });
    process.exitCode = 1;
  }
}

if (process.argv.length > 2) {
  await runScenario(process.argv.slice(2));
} else {
  for await (const line of createInterface({ input: process.stdin })) {
    await runScenario(JSON.parse(line));
  }
}
// gRPC channels keep the event loop alive.
process.exit();
