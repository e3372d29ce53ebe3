/**
 * A minimal HTTP client for the relay tests (node:http, no keep-alive), so tests leave no
 * pooled connections or pending promises behind (undici's fetch does, under --detectAsyncLeaks).
 */
import { request } from "node:http";

export interface HttpJsonResult {
  status: number;
  json: unknown;
  text: string;
}

export function httpJson(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<HttpJsonResult> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = { ...options.headers };
    if (body !== undefined) headers["content-type"] ??= "application/json";
    const outgoing = request(
      url,
      { method: options.method ?? (body === undefined ? "GET" : "POST"), headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, json, text });
        });
      },
    );
    const timer = setTimeout(() => outgoing.destroy(new Error(`no answer from ${url}`)), options.timeoutMs ?? 5_000);
    outgoing.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    outgoing.end(body);
  });
}
