// A real OpenID Connect provider (panva's certified oidc-provider) on loopback, for the SSO tests.
//
// Started by tests/stacklens/sso/provider.py with PORT, CLIENTS (JSON: [{client_id, client_secret,
// redirect_uris}]; more are registered at POST /reg, RFC 7591) and USERS (JSON: {login: {email, email_verified, name, groups}}). Sign-in uses the
// library's development login form (any password; the login names the account) and grants consent at once,
// as a company's provider does for its own applications.
//
// Test hooks beside the provider's routes, under /test/ (loopback only, this process is the tests'):
//   POST /test/users   {login: {...} | null}    set, change (groups change between sign-ins) or remove people
//   POST /test/forge   {claims: {...}} | {sign_with: "foreign" | "rotated"}
//                       the next ID token the token endpoint answers is re-signed with those claims changed,
//                       or with a key the provider does not publish ("foreign") or publishes only from now on
//                       ("rotated": the key set gains it, as in a key rotation)
import http from "node:http";
import { Provider } from "oidc-provider";
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK } from "jose";

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const clients = JSON.parse(process.env.CLIENTS || "[]");
const users = JSON.parse(process.env.USERS || "{}");

async function rsaKey(kid) {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" };
}

const primary = await rsaKey("primary");
const foreign = await rsaKey("foreign");
const rotated = await rsaKey("rotated");
let published = [primary];
let forge = null;

const publicPart = ({ d, p, q, dp, dq, qi, ...rest }) => rest;

const provider = new Provider(issuer, {
  clients: clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    redirect_uris: c.redirect_uris,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_post",
  })),
  jwks: { keys: [primary] },
  claims: {
    openid: ["sub"],
    email: ["email", "email_verified"],
    profile: ["name"],
    groups: ["groups"],
  },
  scopes: ["openid", "email", "profile", "groups"],
  // The ID token carries the scopes' claims (email, groups) itself, as Keycloak, Entra ID and Okta do.
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  // A refresh token for every client allowed the grant, so a session can be refreshed (and refused).
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed("refresh_token"),
  // Dynamic client registration (POST /reg): each test registers a client with its own server's callback.
  features: { devInteractions: { enabled: true }, registration: { enabled: true } },
  cookies: { keys: ["stacklens-test-cookie-key"] },
  findAccount: async (ctx, id) => {
    const person = users[id];
    if (!person) return undefined;
    return {
      accountId: id,
      claims: async () => ({ sub: id, ...person }),
    };
  },
  loadExistingGrant: async (ctx) => {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope(ctx.oidc.requestParamScopes ? [...ctx.oidc.requestParamScopes].join(" ") : "openid");
    grant.addOIDCClaims(["email", "email_verified", "name", "groups"]);
    await grant.save();
    return grant;
  },
});

async function resign(idToken) {
  const header = decodeProtectedHeader(idToken);
  const claims = { ...decodeJwt(idToken), ...(forge.claims || {}) };
  for (const [name, value] of Object.entries(claims)) if (value === null) delete claims[name];
  let key = primary;
  if (forge.sign_with === "foreign") key = foreign;
  if (forge.sign_with === "rotated") {
    key = rotated;
    published = [primary, rotated];
  }
  return new SignJWT(claims).setProtectedHeader({ alg: header.alg, kid: key.kid }).sign(await importJWK(key, "RS256"));
}

provider.use(async (ctx, next) => {
  if (ctx.path === "/jwks" && ctx.method === "GET") {
    ctx.body = { keys: published.map(publicPart) };
    return;
  }
  await next();
  if (ctx.path === "/token" && ctx.status === 200 && forge && ctx.body && ctx.body.id_token) {
    ctx.body = { ...ctx.body, id_token: await resign(ctx.body.id_token) };
    forge = null;
  }
});

function readJson(req) {
  return new Promise((resolve, reject) => {
    let data = "";
    req.on("data", (chunk) => (data += chunk));
    req.on("end", () => {
      try {
        resolve(JSON.parse(data || "{}"));
      } catch (err) {
        reject(err);
      }
    });
  });
}

const callback = provider.callback();
http
  .createServer(async (req, res) => {
    if (req.url.startsWith("/test/") && req.method === "POST") {
      const body = await readJson(req);
      if (req.url === "/test/users") {
        // null removes a person: their refresh tokens are refused from then on
        for (const [login, person] of Object.entries(body)) {
          if (person === null) delete users[login];
          else users[login] = person;
        }
      }
      else if (req.url === "/test/forge") forge = body;
      else if (req.url === "/test/reset") {
        forge = null;
        published = [primary];
      }
      res.writeHead(204).end();
      return;
    }
    callback(req, res);
  })
  .listen(port, "127.0.0.1", () => console.log(`ready ${issuer}`));
