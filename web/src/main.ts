// The console's entry point: log in (or find the session still valid), then the views — data
// sources and points, trend, alarms, configuration (superadmin) — switched by the buttons in the header. Log out ends the
// session and stops the live sockets.
import 'uplot/dist/uPlot.min.css';
import '../console.css';
import { ApiError, currentUser, login, logout, whenUnauthenticated, type User } from './api.js';
import { alarmsView } from './alarms.js';
import { browseView } from './browse.js';
import { byId, field, say, sayError } from './dom.js';
import { trendView } from './trend.js';
import { configurationView } from './configuration.js';

type ViewName = 'data' | 'trend' | 'alarms' | 'config';
const VIEWS: ViewName[] = ['data', 'trend', 'alarms', 'config'];

function start(): void {
  const nav = byId('nav');
  const who = byId('who');
  const loginView = byId('login-view');
  const loginForm = byId<HTMLFormElement>('login-form');
  const loginStatus = byId('login-status');

  const trend = trendView();
  const alarms = alarmsView();
  configurationView();
  let user: User | undefined;
  const browse = browseView(
    (xids) => {
      showView('trend');
      trend.show(xids);
    },
    () => user,
  );

  function showView(name: ViewName): void {
    for (const v of VIEWS) byId(`${v}-view`).hidden = v !== name;
    for (const button of nav.querySelectorAll<HTMLButtonElement>('button[data-view]')) {
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
    byId('config-nav').hidden = !u.permissions.includes('superadmin'); // export and import are the superadmin's
    showView('data');
    void browse.refresh();
    alarms.start();
  }

  function loggedOut(message = '', kind: 'error' | 'info' = 'info'): void {
    user = undefined;
    trend.stop();
    alarms.stop();
    browse.stop();
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

  nav.addEventListener('click', (ev) => {
    const button = (ev.target as Element).closest<HTMLButtonElement>('button[data-view]');
    const name = button?.dataset.view as ViewName | undefined;
    if (!name) return;
    showView(name);
    if (name === 'alarms') void alarms.refresh();
  });

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
