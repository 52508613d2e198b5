// Users (superadmin): the list filtered by RQL (GET /users), a user created (POST /users) or edited
// (PUT /users/<username>: name, email, roles, disabled), a new password set for one (PATCH with the
// password alone: a superadmin needs no current password for another user), its API tokens revoked
// (POST /auth-tokens/revoke/<username>) and deleted (not one's own account: the service refuses).
// The service ends the sessions and tokens of a user whose roles or password change.
//
// The view is built when first shown and taken down at logout: its "Username" and "Password" boxes
// must not stand beside the login form's (a label is found by its text).
import { del, get, post, put, request, rqlQuery, seg, type List, type User } from './api.js';
import { byId, field, formatTime, h, labelCells, say, sayError, sayRefused, showMessages } from './dom.js';
import { mayDeleteUser } from './may.js';

/** A user as GET /users answers (services/users.ts userView). */
export interface UserInfo extends User {
  email: string;
  disabled: boolean;
  lastLogin: number | null;
  lastPasswordChange: number;
}

export interface UsersView {
  show(): Promise<void>;
  stop(): void;
}

/** Role names as typed: comma-separated, trimmed, empties dropped (the service normalises them too). */
export function rolesFrom(text: string): string[] {
  return text
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '');
}

export function usersView(me: () => User | undefined): UsersView {
  const root = byId('users-content');
  let built: ReturnType<typeof build> | undefined;

  function build() {
    const filter = h(
      'form',
      { id: 'users-filter', class: 'row', role: 'search', 'aria-label': 'Filter users' },
      h('label', {}, 'User filter (RQL)', h('input', { name: 'rql', size: 40, value: 'sort(username)', placeholder: 'match(username,*ops*)&sort(username)' })),
      h('button', { type: 'submit' }, 'Apply'),
    );
    const status = h('p', { id: 'users-status', class: 'status', role: 'status' });
    const table = h(
      'table',
      { id: 'users-table', class: 'cards' },
      h('caption', { class: 'sr-only' }, 'Users'),
      h(
        'thead',
        {},
        h('tr', {}, ...['Username', 'Name', 'Email', 'Roles', 'Disabled', 'Last login'].map((t) => h('th', { scope: 'col' }, t)), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions'))),
      ),
      h('tbody'),
    );
    const newButton = h('button', { type: 'button', id: 'user-new' }, 'New user');

    // The editor: a new user (with its first password) or the fields of one.
    const editorTitle = h('h3', { id: 'user-editor-title' }, 'New user');
    const editorForm = h(
      'form',
      { id: 'user-editor-form', class: 'row', novalidate: true },
      h('label', {}, 'Username', h('input', { name: 'username', autocomplete: 'off', required: true })),
      h('label', {}, 'Full name', h('input', { name: 'name', autocomplete: 'off' })),
      h('label', {}, 'Email', h('input', { name: 'email', type: 'email', autocomplete: 'off' })),
      h('label', {}, 'Roles (comma-separated)', h('input', { name: 'permissions', placeholder: 'operators, superadmin', autocomplete: 'off' })),
      h('label', {}, h('input', { name: 'disabled', type: 'checkbox' }), ' Disabled (cannot log in)'),
      h('label', { id: 'user-editor-password' }, 'Initial password (8 characters or more)', h('input', { name: 'password', type: 'password', autocomplete: 'new-password' })),
      h('button', { type: 'submit' }, 'Save user'),
      h('button', { type: 'button', id: 'user-editor-close' }, 'Close'),
    );
    const editorNote = h('p', { class: 'muted', id: 'user-editor-note' });
    const editorStatus = h('p', { id: 'user-editor-status', class: 'status', role: 'status' });
    const editorMessages = h('ul', { id: 'user-editor-messages', class: 'messages', 'aria-label': 'Problems with the user' });
    const editor = h('section', { id: 'user-editor-panel', class: 'panel', 'aria-labelledby': 'user-editor-title', hidden: true }, editorTitle, editorForm, editorNote, editorStatus, editorMessages);

    // A new password for another user.
    const passwordTitle = h('h3', { id: 'user-password-title' }, 'Set password');
    const passwordForm = h(
      'form',
      { id: 'user-password-form', class: 'row' },
      h('label', {}, 'New password for the user', h('input', { name: 'password', type: 'password', autocomplete: 'new-password' })),
      h('button', { type: 'submit' }, 'Save password'),
      h('button', { type: 'button', id: 'user-password-close' }, 'Close'),
    );
    const passwordStatus = h('p', { id: 'user-password-status', class: 'status', role: 'status' });
    const passwordMessages = h('ul', { class: 'messages', 'aria-label': 'Problems with the new password' });
    const passwordPanel = h(
      'section',
      { id: 'user-password-panel', class: 'panel', 'aria-labelledby': 'user-password-title', hidden: true },
      passwordTitle,
      passwordForm,
      h('p', { class: 'muted' }, 'The user’s sessions and API tokens end: it logs in again with the new password.'),
      passwordStatus,
      passwordMessages,
    );

    root.replaceChildren(h('div', { class: 'panel' }, h('h3', {}, 'Users'), filter, status, table, newButton), editor, passwordPanel);
    return { filter, status, table, newButton, editorTitle, editorForm, editorNote, editorStatus, editorMessages, editor, passwordTitle, passwordForm, passwordStatus, passwordMessages, passwordPanel };
  }

  type Parts = ReturnType<typeof build>;
  let editing: UserInfo | undefined;
  let passwordFor: UserInfo | undefined;

  async function load(p: Parts): Promise<void> {
    try {
      const list = await get<List<UserInfo>>('/users' + rqlQuery(field(p.filter, 'rql')));
      p.table.tBodies[0]!.replaceChildren(...list.items.map((u) => row(p, u)));
      labelCells(p.table);
      say(p.status, `${list.items.length} of ${list.total} users`);
    } catch (err) {
      sayError(p.status, err);
    }
  }

  function row(p: Parts, u: UserInfo): HTMLTableRowElement {
    const who = h('span', { class: 'sr-only' }, ` ${u.username}`);
    const self = u.username === me()?.username;
    return h(
      'tr',
      { 'data-username': u.username },
      h('td', {}, u.username),
      h('td', {}, u.name),
      h('td', {}, u.email),
      h('td', {}, u.permissions.join(', ')),
      h('td', {}, u.disabled ? 'yes' : 'no'),
      h('td', {}, u.lastLogin === null ? 'never' : formatTime(u.lastLogin)),
      h(
        'td',
        {},
        h('button', { type: 'button', onclick: () => openEditor(p, u) }, 'Edit', h('span', { class: 'sr-only' }, ' user'), who.cloneNode(true)),
        // One's own password needs the current one: My account asks for it.
        self ? null : ' ',
        self ? null : h('button', { type: 'button', onclick: () => openPassword(p, u) }, 'Set password', h('span', { class: 'sr-only' }, ' of'), who.cloneNode(true)),
        ' ',
        h('button', { type: 'button', onclick: () => void revokeTokens(p, u) }, 'Revoke tokens', h('span', { class: 'sr-only' }, ' of'), who.cloneNode(true)),
        mayDeleteUser(me(), u.username) ? ' ' : null,
        mayDeleteUser(me(), u.username) ? h('button', { type: 'button', onclick: () => void remove(p, u) }, 'Delete', h('span', { class: 'sr-only' }, ' user'), who.cloneNode(true)) : null,
      ),
    );
  }

  const control = (form: HTMLFormElement, name: string) => form.elements.namedItem(name) as HTMLInputElement;

  function openEditor(p: Parts, u: UserInfo | undefined): void {
    editing = u;
    const f = p.editorForm;
    control(f, 'username').value = u?.username ?? '';
    control(f, 'name').value = u?.name ?? '';
    control(f, 'email').value = u?.email ?? '';
    control(f, 'permissions').value = (u?.permissions ?? []).join(', ');
    control(f, 'disabled').checked = u?.disabled ?? false;
    control(f, 'password').value = '';
    byId('user-editor-password').hidden = u !== undefined;
    // The service refuses a change of one's own roles or disabled flag (a superadmin locking itself out).
    const self = u !== undefined && u.username === me()?.username;
    control(f, 'permissions').disabled = self;
    control(f, 'disabled').disabled = self;
    p.editorNote.textContent = self ? 'Your own roles and disabled flag cannot be changed here (by you).' : u ? 'A change of roles ends the user’s sessions and API tokens.' : '';
    p.editorTitle.textContent = u ? `Edit user ${u.username}` : 'New user';
    say(p.editorStatus, '');
    showMessages(p.editorMessages, undefined);
    p.editor.hidden = false;
    p.editor.scrollIntoView({ block: 'nearest' });
    control(f, 'username').focus();
  }

  function editedBody(f: HTMLFormElement): Record<string, unknown> {
    const body: Record<string, unknown> = {
      username: field(f, 'username').trim(),
      name: field(f, 'name'),
      email: field(f, 'email').trim(),
      permissions: rolesFrom(field(f, 'permissions')),
      disabled: field(f, 'disabled') === 'true',
    };
    if (!editing) body.password = field(f, 'password');
    return body;
  }

  async function save(p: Parts): Promise<void> {
    const before = editing;
    const body = editedBody(p.editorForm);
    try {
      const saved = before ? await put<UserInfo>(`/users/${seg(before.username)}`, body) : await post<UserInfo>('/users', body);
      showMessages(p.editorMessages, undefined);
      openEditor(p, saved);
      say(p.editorStatus, `${before ? 'Saved' : 'Created'} user ${saved.username}`, 'ok');
      await load(p);
    } catch (err) {
      sayRefused(p.editorStatus, p.editorMessages, err, before ? 'Not saved' : 'Not created');
    }
  }

  function openPassword(p: Parts, u: UserInfo): void {
    passwordFor = u;
    p.passwordTitle.textContent = `Set password: ${u.username}`;
    control(p.passwordForm, 'password').value = '';
    say(p.passwordStatus, '');
    showMessages(p.passwordMessages, undefined);
    p.passwordPanel.hidden = false;
    p.passwordPanel.scrollIntoView({ block: 'nearest' });
    control(p.passwordForm, 'password').focus();
  }

  async function savePassword(p: Parts): Promise<void> {
    const u = passwordFor;
    if (!u) return;
    try {
      await request<UserInfo>('PATCH', `/users/${seg(u.username)}`, { password: field(p.passwordForm, 'password') });
      control(p.passwordForm, 'password').value = '';
      showMessages(p.passwordMessages, undefined);
      say(p.passwordStatus, `Set a new password for ${u.username}`, 'ok');
    } catch (err) {
      sayRefused(p.passwordStatus, p.passwordMessages, err, 'Password not set');
    }
  }

  async function revokeTokens(p: Parts, u: UserInfo): Promise<void> {
    if (!window.confirm(`Revoke every API token of ${u.username}? Scripts using one must get a new one.`)) return;
    try {
      await post<undefined>(`/auth-tokens/revoke/${seg(u.username)}`);
      say(p.status, `Revoked the API tokens of ${u.username}`, 'ok');
    } catch (err) {
      sayError(p.status, err);
    }
  }

  async function remove(p: Parts, u: UserInfo): Promise<void> {
    if (!window.confirm(`Delete user ${u.username}?`)) return;
    try {
      await del<UserInfo>(`/users/${seg(u.username)}`);
      if (editing?.username === u.username) p.editor.hidden = true;
      if (passwordFor?.username === u.username) p.passwordPanel.hidden = true;
      await load(p);
      say(p.status, `Deleted user ${u.username}`, 'ok');
    } catch (err) {
      sayError(p.status, err);
    }
  }

  function wire(p: Parts): void {
    p.filter.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void load(p);
    });
    p.newButton.addEventListener('click', () => openEditor(p, undefined));
    p.editorForm.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void save(p);
    });
    p.passwordForm.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void savePassword(p);
    });
    byId('user-editor-close').addEventListener('click', () => (p.editor.hidden = true));
    byId('user-password-close').addEventListener('click', () => (p.passwordPanel.hidden = true));
  }

  return {
    async show() {
      if (!built) {
        built = build();
        wire(built);
      }
      await load(built);
    },
    stop() {
      built = undefined;
      editing = undefined;
      passwordFor = undefined;
      root.replaceChildren();
    },
  };
}
