import { describe, expect, it } from "vitest";
import {
  cloudSecrets,
  cloudStatusHeaders,
  cloudStatusUrl,
  normaliseCloudBaseUrl,
} from "../../packages/toolrelay/src/transport/cloud-status-address.js";

const header = { mode: "header" as const, apiKey: "k e/y" };

describe("cloud status address", () => {
  it("maps https to wss and http to ws, keeps a path prefix, encodes the connection id", () => {
    expect(
      cloudStatusUrl(
        { baseUrl: "https://api.letta.com", connectionId: "a/b c", agentId: "agent-1", conversationId: "default" },
        "control",
        header,
      ),
    ).toBe("wss://api.letta.com/v1/environments/a%2Fb%20c/status/ws?agentId=agent-1&conversationId=default&channel=control");
    expect(cloudStatusUrl({ baseUrl: "http://127.0.0.1:8283/prefix/", connectionId: "c" }, "stream", header)).toBe(
      "ws://127.0.0.1:8283/prefix/v1/environments/c/status/ws?channel=stream",
    );
  });

  it("adds token= only in query mode", () => {
    const url = new URL(cloudStatusUrl({ baseUrl: "https://x.test", connectionId: "c" }, "stream", { mode: "query", apiKey: "k e/y" }));
    expect(url.searchParams.get("token")).toBe("k e/y");
    expect(cloudStatusUrl({ baseUrl: "https://x.test", connectionId: "c" }, "stream", header)).not.toContain("token");
  });

  it("replaces a caller authorization header in header mode and sends none in query mode", () => {
    expect(cloudStatusHeaders("key", "header", { AUTHORIZATION: "Bearer x", "x-project-id": "p" })).toEqual({
      "x-project-id": "p",
      Authorization: "Bearer key",
    });
    expect(cloudStatusHeaders("key", "query", { authorization: "Bearer x" })).toEqual({});
  });

  it("lists the raw, percent-encoded and form-encoded key as secrets", () => {
    expect(cloudSecrets("k e/y")).toEqual(["k e/y", "k%20e%2Fy", "k+e%2Fy"]);
    expect(cloudSecrets("plain")).toEqual(["plain"]);
  });

  it("refuses base URLs with credentials, a query or another scheme", () => {
    for (const bad of ["ftp://x", "https://user:pw@x.test", "https://x.test/?token=1", "not a url"]) {
      expect(() => normaliseCloudBaseUrl(bad)).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
    }
    expect(normaliseCloudBaseUrl("https://api.letta.com/")).toBe("https://api.letta.com");
  });
});
