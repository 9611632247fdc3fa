// A real, independent OpenID provider for Facade's tests: npm's
// oidc-provider (OpenID Certified), started by package testoidc with one
// confidential client and the accounts of a JSON file. Its development
// login and consent pages stand in for a person: any login that names an
// account signs in as it.
//
//   node provider.mjs <port> <config.json>
import fs from 'node:fs';
import Provider from 'oidc-provider';

const [port, configPath] = process.argv.slice(2);
const cfg = JSON.parse(fs.readFileSync(configPath, 'utf8'));
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: cfg.client_id,
    client_secret: cfg.client_secret,
    redirect_uris: [cfg.redirect_uri],
    post_logout_redirect_uris: [cfg.post_logout_redirect_uri],
    response_types: ['code'],
    grant_types: ['authorization_code', 'refresh_token'],
    // Back-Channel Logout 1.0: the provider POSTs a logout token here
    // when the person's session at it ends (with the session's sid).
    ...(cfg.backchannel_logout_uri ? {
      backchannel_logout_uri: cfg.backchannel_logout_uri,
      backchannel_logout_session_required: true,
    } : {}),
  }],
  // The provider refuses to call special-use addresses (its SSRF guard);
  // in tests the client (the facade) is on loopback, so its back-channel
  // logout goes out without that guard.
  fetch: (url, options) => {
    delete options.dispatcher;
    return globalThis.fetch(url, options);
  },
  // Signing keys a test gives (to forge logout tokens with the provider's
  // own key), else the provider's development keys.
  ...(cfg.jwks ? { jwks: cfg.jwks } : {}),
  scopes: ['openid', 'offline_access', 'profile', 'groups', 'role'],
  claims: {
    openid: ['sub'],
    profile: ['preferred_username', 'name'],
    groups: ['groups'],
    role: ['role'],
  },
  // Claims of the scopes asked for go into the ID token, as Entra,
  // Keycloak and Dex put groups there.
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  cookies: { keys: ['testoidc-cookie-key-not-a-secret'] },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: { enabled: true },
    backchannelLogout: { enabled: true },
  },
  // Accounts are read afresh each time, so a test can change a person's
  // groups or remove them (Provider.SetAccount) while they are signed in.
  async findAccount(ctx, id) {
    const account = JSON.parse(fs.readFileSync(configPath, 'utf8')).accounts[id];
    if (!account) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...account }; } };
  },
});

provider.on('backchannel.error', (ctx, err) => console.log(`backchannel error: ${err.message}`));
provider.on('backchannel.success', (ctx, client, accountId, sid) => console.log(`backchannel sent: ${accountId} ${sid}`));

provider.listen(Number(port), '127.0.0.1', () => {
  console.log(`listening ${issuer}`);
});
