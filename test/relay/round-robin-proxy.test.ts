import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type RoundRobinProxy, startRoundRobinProxy } from "../../integration/support/round-robin-proxy.js";
import { until } from "../support/wait.js";

/** A loopback echo server that prefixes each line it echoes with its name, so a client sees which target it reached. */
interface EchoServer {
  readonly name: string;
  readonly target: { host: string; port: number };
  readonly key: string;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startEchoServer(name: string): Promise<EchoServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => socket.destroy());
    socket.once("close", () => sockets.delete(socket));
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => socket.write(`${name}:${text}`));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  const echo: EchoServer = {
    name,
    target: { host: "127.0.0.1", port },
    key: `127.0.0.1:${port}`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
  cleanups.push(() => echo.close());
  return echo;
}

async function startProxy(echoes: EchoServer[]): Promise<RoundRobinProxy> {
  const proxy = await startRoundRobinProxy(echoes.map((echo) => echo.target));
  cleanups.push(() => proxy.close());
  return proxy;
}

/** A client of the proxy: `ask` writes a line and resolves with the echoed line (`<server name>:<line>`). */
async function openClient(port: number): Promise<{ socket: Socket; ask(line: string): Promise<string> }> {
  const socket = connect({ host: "127.0.0.1", port });
  socket.on("error", () => undefined);
  cleanups.push(() => {
    socket.destroy();
  });
  await once(socket, "connect");
  socket.setEncoding("utf8");
  let received = "";
  socket.on("data", (text: string) => {
    received += text;
  });
  return {
    socket,
    async ask(line) {
      socket.write(`${line}\n`);
      await until(() => received.includes("\n"), `an answer to ${line}`);
      const [answer, rest] = [received.slice(0, received.indexOf("\n")), received.slice(received.indexOf("\n") + 1)];
      received = rest;
      return answer;
    },
  };
}

describe("round-robin proxy", () => {
  it("sends each new connection to the next target in turn, both ways", async () => {
    const echoes = await Promise.all(["a", "b", "c"].map(startEchoServer));
    const proxy = await startProxy(echoes);
    expect(proxy.url).toBe(`http://127.0.0.1:${proxy.port}`);

    const answers: string[] = [];
    for (let index = 0; index < 6; index++) answers.push(await (await openClient(proxy.port)).ask(`hello ${index}`));

    expect(answers).toEqual(["a:hello 0", "b:hello 1", "c:hello 2", "a:hello 3", "b:hello 4", "c:hello 5"]);
    expect(proxy.counts()).toEqual(Object.fromEntries(echoes.map((echo) => [echo.key, 2])));
    expect(proxy.connections()).toBe(6);
  });

  it("skips a target whose connect is refused, and destroys the client when none accepts", async () => {
    const echoes = await Promise.all(["a", "b", "c"].map(startEchoServer));
    const proxy = await startProxy(echoes);
    await echoes[1]!.close();

    const answers: string[] = [];
    for (let index = 0; index < 6; index++) answers.push(await (await openClient(proxy.port)).ask(`x${index}`));
    expect(answers.map((answer) => answer.split(":")[0])).toEqual(["a", "c", "a", "c", "a", "c"]);
    expect(proxy.counts()).toEqual({ [echoes[0]!.key]: 3, [echoes[2]!.key]: 3 });

    proxy.setTargets([echoes[1]!.target]);
    const refused = await openClient(proxy.port);
    await once(refused.socket, "close");
    expect(proxy.connections()).toBe(6);
  });

  it("follows setTargets for the next connections", async () => {
    const echoes = await Promise.all(["a", "b"].map(startEchoServer));
    const proxy = await startProxy(echoes);
    proxy.setTargets([echoes[1]!.target]);
    expect(await (await openClient(proxy.port)).ask("1")).toBe("b:1");
    expect(await (await openClient(proxy.port)).ask("2")).toBe("b:2");
  });

  it("ends a client's connection when its target closes it, and the target's when the client leaves", async () => {
    const [echo] = await Promise.all(["a"].map(startEchoServer));
    const proxy = await startProxy([echo!]);
    const first = await openClient(proxy.port);
    expect(await first.ask("hi")).toBe("a:hi");
    first.socket.end();
    await until(() => proxy.connections() === 0, "the proxy to drop the client that left");

    const second = await openClient(proxy.port);
    expect(await second.ask("hi")).toBe("a:hi");
    const closed = once(second.socket, "close");
    await echo!.close();
    await closed;
    await until(() => proxy.connections() === 0, "the proxy to drop the client whose target closed");
  });

  it("close() ends every open connection", async () => {
    const echoes = await Promise.all(["a", "b"].map(startEchoServer));
    const proxy = await startProxy(echoes);
    const clients = [await openClient(proxy.port), await openClient(proxy.port)];
    for (const client of clients) await client.ask("up");
    expect(proxy.connections()).toBe(2);

    const closed = clients.map((client) => once(client.socket, "close"));
    await proxy.close();
    await Promise.all(closed);
    expect(proxy.connections()).toBe(0);
  });
});
