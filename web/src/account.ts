// My account (every user): who the console is logged in as and with which roles, a change of one's
// own password (PATCH /users/<me> with the current password, which the service asks of a self-service
// change), and API tokens: one created for scripts (POST /auth-tokens/create, shown once) and all of
// them revoked (POST /auth-tokens/revoke).
//
// The service keeps no record of the tokens it issues (a JWT is checked by its signature and the
// user's token version), so there is no list to show: each token is valid until its expiry or until
// the user's tokens are revoked, all at once. A password change revokes them too and ends the user's
// other sessions; this one stays logged in.
//
// Built when shown and taken down at logout, as the Users view (its password boxes must not stand
// beside the login form's).
import { get, post, request, seg } from './api.js';
import { byId, field, formatTime, h, say, sayError, sayRefused, showMessages } from './dom.js';
import type { UserInfo } from './users.js';

/** Choices of a new token's life; the service caps it (JWT_MAX_EXPIRY_DAYS, 365 days by default). */
const TOKEN_LIVES: [label: string, ms: number][] = [
  ['1 hour', 3_600_000],
  ['1 day', 86_400_000],
  ['30 days', 30 * 86_400_000],
  ['90 days', 90 * 86_400_000],
];

export interface AccountView {
  show(): Promise<void>;
  stop(): void;
}

export function accountView(): AccountView {
  const root = byId('account-content');

  function build() {
    const who = h('dl', { id: 'account-who', class: 'facts' });
    const passwordForm = h(
      'form',
      { id: 'own-password-form', class: 'stack' },
      h('label', {}, 'Current password', h('input', { name: 'currentPassword', type: 'password', autocomplete: 'current-password' })),
      h('label', {}, 'New password (8 characters or more)', h('input', { name: 'password', type: 'password', autocomplete: 'new-password' })),
      h('label', {}, 'New password again', h('input', { name: 'again', type: 'password', autocomplete: 'new-password' })),
      h('button', { type: 'submit' }, 'Change password'),
    );
    const passwordStatus = h('p', { id: 'own-password-status', class: 'status', role: 'status' });
    const passwordMessages = h('ul', { class: 'messages', 'aria-label': 'Problems with your new password' });

    const tokenForm = h(
      'form',
      { id: 'token-form', class: 'row' },
      h('label', {}, 'Valid for', h('select', { name: 'life' }, ...TOKEN_LIVES.map(([label, ms]) => h('option', { value: String(ms) }, label)))),
      h('button', { type: 'submit' }, 'Create token'),
    );
    const tokenOut = h('div', { id: 'token-out', class: 'stack wide', hidden: true });
    const revokeButton = h('button', { type: 'button', id: 'tokens-revoke' }, 'Revoke all my tokens');
    const tokenStatus = h('p', { id: 'token-status', class: 'status', role: 'status' });

    root.replaceChildren(
      h('section', { class: 'panel', 'aria-labelledby': 'account-who-title' }, h('h3', { id: 'account-who-title' }, 'Logged in as'), who),
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'own-password-title' },
        h('h3', { id: 'own-password-title' }, 'Change your password'),
        passwordForm,
        h('p', { class: 'muted' }, 'Your other sessions end and your API tokens stop working; this session stays logged in.'),
        passwordStatus,
        passwordMessages,
      ),
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'tokens-title' },
        h('h3', { id: 'tokens-title' }, 'API tokens'),
        h(
          'p',
          { class: 'muted' },
          'A token lets a script call the API as you (header Authorization: Bearer <token>). The service keeps no list of the tokens it issued: each works until it expires or until you revoke them all.',
        ),
        tokenForm,
        tokenOut,
        h('div', { class: 'row' }, revokeButton),
        tokenStatus,
      ),
    );
    return { who, passwordForm, passwordStatus, passwordMessages, tokenForm, tokenOut, revokeButton, tokenStatus };
  }

  type Parts = ReturnType<typeof build>;
  let built: Parts | undefined;
  let me: UserInfo | undefined;

  function showWho(p: Parts, u: UserInfo): void {
    const fact = (term: string, value: string) => [h('dt', {}, term), h('dd', {}, value)];
    p.who.replaceChildren(
      ...fact('Username', u.username),
      ...fact('Full name', u.name || '—'),
      ...fact('Email', u.email || '—'),
      ...fact('Roles', u.permissions.length > 0 ? u.permissions.join(', ') : 'none (the user role only)'),
      ...fact('Password changed', formatTime(u.lastPasswordChange)),
    );
  }

  async function changePassword(p: Parts): Promise<void> {
    const f = p.passwordForm;
    showMessages(p.passwordMessages, undefined);
    if (!me) return;
    if (field(f, 'password') !== field(f, 'again')) {
      say(p.passwordStatus, 'The new password and its repetition differ', 'error');
      return;
    }
    try {
      me = await request<UserInfo>('PATCH', `/users/${seg(me.username)}`, { password: field(f, 'password'), currentPassword: field(f, 'currentPassword') });
      for (const name of ['currentPassword', 'password', 'again']) (f.elements.namedItem(name) as HTMLInputElement).value = '';
      showWho(p, me);
      say(p.passwordStatus, 'Password changed: log in with the new one from now on', 'ok');
    } catch (err) {
      sayRefused(p.passwordStatus, p.passwordMessages, err, 'Password not changed');
    }
  }

  async function createToken(p: Parts): Promise<void> {
    try {
      const expiry = Date.now() + Number(field(p.tokenForm, 'life'));
      const made = await post<{ token: string; expiry: number }>('/auth-tokens/create', { expiry });
      p.tokenOut.replaceChildren(
        h('label', {}, `New token, valid until ${formatTime(made.expiry)} (copy it now: it is not shown again)`, h('textarea', { name: 'token', rows: 4, readonly: true, class: 'token' }, made.token)),
      );
      p.tokenOut.hidden = false;
      say(p.tokenStatus, '');
    } catch (err) {
      sayError(p.tokenStatus, err);
    }
  }

  async function revokeAll(p: Parts): Promise<void> {
    if (!window.confirm('Revoke all your API tokens? Scripts using one must get a new one.')) return;
    try {
      await post<undefined>('/auth-tokens/revoke');
      p.tokenOut.hidden = true;
      p.tokenOut.replaceChildren();
      say(p.tokenStatus, 'Revoked all your API tokens', 'ok');
    } catch (err) {
      sayError(p.tokenStatus, err);
    }
  }

  function wire(p: Parts): void {
    p.passwordForm.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void changePassword(p);
    });
    p.tokenForm.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void createToken(p);
    });
    p.revokeButton.addEventListener('click', () => void revokeAll(p));
  }

  return {
    async show() {
      if (!built) {
        built = build();
        wire(built);
      }
      const p = built;
      try {
        me = await get<UserInfo>('/users/current');
        showWho(p, me);
      } catch (err) {
        sayError(p.passwordStatus, err);
      }
    },
    stop() {
      built = undefined;
      me = undefined;
      root.replaceChildren();
    },
  };
}
