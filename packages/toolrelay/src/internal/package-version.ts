/**
 * The SDK's version, from its package.json (never a literal): what the sidecar reports in
 * `welcome`, the ACP agent's default `agentInfo` and the MCP client's `clientInfo` say.
 */
import manifest from "../../package.json" with { type: "json" };

export const PACKAGE_VERSION: string = manifest.version;
