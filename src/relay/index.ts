/**
 * `toolrelay/relay`: a reference status relay that does what Letta Cloud's relay does for
 * external tools — registration and sockets for the Letta Code listener, status sockets with
 * `seq`/ack redelivery for SDK clients, and outstanding tool calls remembered until answered.
 * See docs/relay.md.
 *
 * @module toolrelay/relay
 */
export { startRelay, type Relay, type DropSdkSocketsOptions } from "./relay-server.js";
export {
  resolveRelayOptions,
  isLoopbackHost,
  silentRelayLogger,
  type RelayOptions,
  type ResolvedRelayOptions,
  type RelayLogger,
  type ListenerMode,
} from "./relay-options.js";
export type { RelayEvents, RelayEnvironmentInfo, SdkSocketEvent } from "./relay-events.js";
export type { RegistrationAnswer, RegistrationRequest } from "./listener-registry.js";
export {
  runRelayCli,
  parseRelayCliArguments,
  readApiKeysFile,
  RelayCliUsageError,
  RELAY_CLI_USAGE,
  type RelayCliIo,
} from "./cli.js";
export type { Channel as RelayChannel } from "./relay-routing.js";
