// The LangGraph.js side: the same agent step as ours (model -> get_current_time -> model -> final answer) as a
// StateGraph with a fake chat model, a ToolNode with one tool, and the SQLite checkpointer (SqliteSaver) on a
// connection with our store's durability pragmas.
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { openFloorDb } from './sqlite-floor.mjs';

/** A chat model that scripts one `get_current_time` call, then (after its ToolMessage) a final answer. */
class ScriptedChatModel extends BaseChatModel {
  #calls = 0;

  _llmType() {
    return 'bench-scripted';
  }

  async _generate(messages) {
    const n = ++this.#calls;
    const last = messages.at(-1);
    const message =
      last instanceof ToolMessage
        ? new AIMessage({ content: `It is ${last.content}.`, usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } })
        : new AIMessage({
            content: '',
            tool_calls: [{ id: `call_${n}`, name: 'get_current_time', args: {}, type: 'tool_call' }],
            usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
          });
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}

const getCurrentTime = tool(async ({ timezone }) => new Date().toLocaleString('en-US', { timeZone: timezone }), {
  name: 'get_current_time',
  description: 'Read the wall-clock time. Optional timezone is an IANA name such as UTC (default UTC).',
  schema: z.object({ timezone: z.string().min(1).max(64).default('UTC') }),
});

/**
 * The compiled graph on a SqliteSaver at `path`. `step()` runs one agent step on a new thread and checks that it
 * went model -> tool -> model; `close()` closes the connection.
 */
export function langGraphAgent(path) {
  const db = openFloorDb(path);
  const checkpointer = new SqliteSaver(db);
  const model = new ScriptedChatModel({});
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', new ToolNode([getCurrentTime]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer });
  let thread = 0;
  return {
    async step() {
      const out = await graph.invoke({ messages: [new HumanMessage('What time is it?')] }, { configurable: { thread_id: `t${++thread}` } });
      const kinds = out.messages.map((m) => m.getType()).join(',');
      if (kinds !== 'human,ai,tool,ai') throw new Error(`langgraph step: expected human,ai,tool,ai, got ${kinds}`);
    },
    close: () => db.close(),
  };
}
