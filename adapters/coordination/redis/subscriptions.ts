/**
 * Publish/subscribe's receiving side: one subscriber connection shared by every subscription,
 * opened on the first `subscribe`, and the handlers of each channel. Resubscribing is ours, not
 * ioredis's (`autoResubscribe: false`), so that `gap` is called only once the channels are
 * subscribed again: a message published after `gap` is never missed because of the outage that
 * caused it.
 */
import { Redis } from "ioredis";
import { DependencyUnavailableError, type Subscription, type SubscriptionHandlers } from "../../ports.ts";
import { failClosedOptions, isTimeout, quitConnection, unavailable, withDeadline } from "./connection.ts";

/** The subscriptions of one store. */
export interface RedisSubscriptions {
  /** Prepended to channel names on the server. */
  readonly prefix: string;
  subscribe(channel: string, handlers: SubscriptionHandlers): Promise<Subscription>;
  close(): Promise<void>;
}

export interface RedisSubscriptionOptions {
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** The server, without credentials, for error messages. */
  where: string;
}

export function createSubscriptions(url: string, prefix: string, o: RedisSubscriptionOptions): RedisSubscriptions {
  const s: _SubState = { url, prefix, o, channels: new Map(), connection: null, closed: false };
  return {
    prefix,
    subscribe: (channel, handlers) => _subscribe(s, channel, handlers),
    async close(): Promise<void> {
      s.closed = true;
      s.channels.clear();
      const sub = await s.connection?.catch(() => null);
      if (sub) await quitConnection(sub);
    },
  };
}

// --- Internal helpers ---

interface _SubState {
  readonly url: string;
  readonly prefix: string;
  readonly o: RedisSubscriptionOptions;
  /** channel (without prefix) → the handlers subscribed to it. */
  readonly channels: Map<string, Set<SubscriptionHandlers>>;
  connection: Promise<Redis> | null;
  closed: boolean;
}

async function _subscribe(s: _SubState, channel: string, handlers: SubscriptionHandlers): Promise<Subscription> {
  if (s.closed) throw new DependencyUnavailableError("redis", "redis coordination store is closed", "transport");
  s.connection ??= _open(s).catch((e) => {
    s.connection = null;
    throw e;
  });
  const sub = await s.connection;
  const own: SubscriptionHandlers = { message: (m) => handlers.message(m), gap: () => handlers.gap?.() };
  let set = s.channels.get(channel);
  if (!set) {
    set = new Set();
    s.channels.set(channel, set);
  }
  set.add(own);
  try {
    await sub.subscribe(s.prefix + channel);
  } catch (e) {
    set.delete(own);
    throw unavailable(e, "subscribe");
  }
  let done = false;
  const handlersOfChannel = set;
  return {
    async close(): Promise<void> {
      if (done) return;
      done = true;
      handlersOfChannel.delete(own);
      if (handlersOfChannel.size > 0 || s.channels.get(channel) !== handlersOfChannel) return;
      s.channels.delete(channel);
      await sub.unsubscribe(s.prefix + channel).catch(() => undefined);
    },
  };
}

/** Opens the subscriber connection: delivers messages to the channel's handlers, resubscribes after a reconnect. */
async function _open(s: _SubState): Promise<Redis> {
  const { o, prefix, channels } = s;
  const sub = new Redis(s.url, { ...failClosedOptions(o.commandTimeoutMs, o.connectTimeoutMs), autoResubscribe: false });
  let lastError = "";
  let readyBefore = false;
  sub.on("error", (e: Error) => {
    lastError = e.message;
  });
  sub.on("message", (full: string, message: string) => {
    const set = channels.get(full.slice(prefix.length));
    if (!set) return;
    for (const h of set) {
      try {
        h.message(message);
      } catch {
        // a subscriber's failure is its own
      }
    }
  });
  sub.on("ready", () => {
    if (!readyBefore) {
      readyBefore = true;
      return;
    }
    _resubscribe(s, sub);
  });
  try {
    await withDeadline(sub.connect(), o.connectTimeoutMs + o.commandTimeoutMs, "connect");
  } catch (e) {
    sub.disconnect();
    const why = (isTimeout(e) ? (e as Error).message : lastError || (e as Error).message) || "unknown error";
    throw new DependencyUnavailableError("redis", `redis subscribe: cannot connect to ${o.where}: ${why}`, "transport");
  }
  return sub;
}

/** After a reconnect: subscribe to every channel again, then tell each subscriber it may have missed messages. */
function _resubscribe(s: _SubState, sub: Redis): void {
  const names = [...s.channels.keys()].map((c) => s.prefix + c);
  const resubscribed = names.length > 0 ? sub.subscribe(...names) : Promise.resolve(0);
  resubscribed.then(
    () => {
      for (const set of s.channels.values()) for (const h of set) _safeGap(h);
    },
    () => sub.disconnect(true), // try again from a fresh connection
  );
}

function _safeGap(h: SubscriptionHandlers): void {
  try {
    h.gap?.();
  } catch {
    // a subscriber's failure is its own
  }
}
