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
    grant_types: ['authorization_code'],
  }],
  scopes: ['openid', 'profile', 'groups', 'role'],
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
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  async findAccount(ctx, id) {
    const account = cfg.accounts[id];
    if (!account) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...account }; } };
  },
});

provider.listen(Number(port), '127.0.0.1', () => {
  console.log(`listening ${issuer}`);
});
