// The console's entry point: log in (or find the session still valid), then the views — data
// sources and points, trend, alarms, event handlers, configuration and users (superadmin), and the
// user's own account — switched by the buttons in the header; actions the user may not take are not
// shown (may.ts). Log out ends the session and stops the live sockets.
import 'uplot/dist/uPlot.min.css';
import '../console.css';
import { ApiError, currentUser, login, logout, whenUnauthenticated, type User } from './api.js';
import { alarmsView } from './alarms.js';
import { browseView } from './browse.js';
import { byId, field, say, sayError } from './dom.js';
import { trendView } from './trend.js';
import { configurationView } from './configuration.js';
import { handlersView } from './handlers.js';
import { isSuperadmin, mayDeleteHistory, mayManageUsers } from './may.js';
import { SourceRoles } from './source-roles.js';
import { usersView } from './users.js';
import { accountView } from './account.js';

type ViewName = 'data' | 'trend' | 'alarms' | 'handlers' | 'config' | 'users' | 'account';
const VIEWS: ViewName[] = ['data', 'trend', 'alarms', 'handlers', 'config', 'users', 'account'];

function start(): void {
  const nav = byId('nav');
  const who = byId('who');
  const loginView = byId('login-view');
  const loginForm = byId<HTMLFormElement>('login-form');
  const loginStatus = byId('login-status');

  let user: User | undefined;
  // The sources' roles, read by the data view's refresh: a point may be edited through its source, so
  // the trend offers to delete values of the points the user may edit that way too.
  const sourceRoles = new SourceRoles(() => user);
  const trend = trendView({ mayDelete: (point) => mayDeleteHistory(user, point, sourceRoles.of(point.dataSourceXid)) });
  const alarms = alarmsView(() => user);
  configurationView();
  const handlers = handlersView();
  const users = usersView(() => user);
  const account = accountView();
  const browse = browseView(
    (xids) => {
      showView('trend');
      trend.show(xids);
    },
    () => user,
    sourceRoles,
  );

  function showView(name: ViewName): void {
    for (const v of VIEWS) byId(`${v}-view`).hidden = v !== name;
    for (const button of document.querySelectorAll<HTMLButtonElement>('.top button[data-view]')) {
      if (button.dataset.view === name) button.setAttribute('aria-current', 'page');
      else button.removeAttribute('aria-current');
    }
  }

  function loggedIn(u: User): void {
    user = u;
    loginView.hidden = true;
    nav.hidden = false;
    who.hidden = false;
    byId('username').textContent = u.name ? `${u.name} (${u.username})` : u.username;
    const superadmin = isSuperadmin(u);
    byId('config-nav').hidden = !superadmin; // export and import are the superadmin's
    byId('handlers-nav').hidden = !superadmin; // and so are event handlers (URLs, recipients, secrets)
    byId('users-nav').hidden = !mayManageUsers(u);
    showView('data');
    void browse.refresh();
    alarms.start();
  }

  function loggedOut(message = '', kind: 'error' | 'info' = 'info'): void {
    user = undefined;
    trend.stop();
    alarms.stop();
    browse.stop();
    users.stop();
    account.stop();
    for (const v of VIEWS) byId(`${v}-view`).hidden = true;
    nav.hidden = true;
    who.hidden = true;
    loginView.hidden = false;
    say(loginStatus, message, kind);
    (loginForm.elements.namedItem('username') as HTMLInputElement).focus();
  }

  whenUnauthenticated((err: ApiError) => {
    if (!loginView.hidden) return;
    loggedOut(`${err.message}: log in again`, 'error');
  });

  // The views' buttons: in the nav, and My account beside the user's name.
  const openView = (ev: Event) => {
    const button = (ev.target as Element).closest<HTMLButtonElement>('button[data-view]');
    const name = button?.dataset.view as ViewName | undefined;
    if (!name) return;
    showView(name);
    if (name === 'alarms') void alarms.refresh();
    if (name === 'handlers') void handlers.refresh();
    if (name === 'users') void users.show();
    if (name === 'account') void account.show();
  };
  nav.addEventListener('click', openView);
  who.addEventListener('click', openView);

  loginForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const button = loginForm.querySelector('button');
    if (button) button.disabled = true;
    say(loginStatus, '');
    login(field(loginForm, 'username'), field(loginForm, 'password'))
      .then((user) => {
        (loginForm.elements.namedItem('password') as HTMLInputElement).value = '';
        loggedIn(user);
      })
      .catch((err: unknown) => sayError(loginStatus, err))
      .finally(() => {
        if (button) button.disabled = false;
      });
  });

  byId('logout').addEventListener('click', () => {
    logout()
      .then(() => loggedOut('Logged out'))
      .catch((err: unknown) => loggedOut(err instanceof ApiError ? err.message : String(err), 'error'));
  });

  currentUser()
    .then((user) => (user ? loggedIn(user) : loggedOut()))
    .catch((err: unknown) => loggedOut(err instanceof Error ? err.message : String(err), 'error'))
    .finally(() => (byId('loading').hidden = true));
}

start();
