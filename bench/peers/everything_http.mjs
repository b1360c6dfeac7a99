// server-everything (npm @modelcontextprotocol/server-everything) in its
// Streamable HTTP mode, listening on 127.0.0.1 only: the package listens on
// every interface, so `listen(port)` is given the loopback host here.
// Usage: PORT=8123 node bench/peers/everything_http.mjs  (endpoint /mcp)
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, ...rest) {
    if (typeof port === "number" || typeof port === "string") {
        const callback = rest.find((arg) => typeof arg === "function");
        return listen.call(this, { port: Number(port), host: "127.0.0.1" }, callback);
    }
    return listen.call(this, port, ...rest);
};

await import(
    new URL(
        "./node_modules/@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js",
        import.meta.url,
    )
);
