/**
 * What an API key may do (docs/keys-and-environments.md): named here, below both the keys that store it (keys/) and the gate that
 * checks it (http/), so that neither folder reaches into the other for it.
 */
export type ApiKeyPermission = "read-only" | "read-write" | "admin";
