/** The bridge's own HTTP headers, spelled once: the default request header naming a thread (also sent back on every answer) and the answer's header naming the Letta conversation behind it. */
export const THREAD_HEADER = "x-toolrelay-thread";
export const CONVERSATION_HEADER = "x-letta-conversation";
