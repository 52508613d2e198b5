// One alarm's comments, oldest first, in a panel above the alarms list: add a comment (POST
// /events/<id>/comments) or acknowledge with one (PUT /events/acknowledge/<id> {"comment"}). The
// alarms list hands it every newer state of the alarms (pushes included), so comments written by
// others appear while it is open; a refusal's field messages are listed under the form.
import { post, put, type AlarmEvent } from './api.js';
import { byId, formatTime, h, say, sayRefused, showMessages } from './dom.js';

export interface AlarmComments {
  open(event: AlarmEvent): void;
  /** A newer state of an alarm: shown when it is the open one. */
  update(event: AlarmEvent): void;
  close(): void;
}

/** `learned`: an answer's state of the alarm, for the list. */
export function alarmComments(learned: (event: AlarmEvent) => void): AlarmComments {
  const panel = byId('alarm-comments-panel');
  const title = byId('alarm-comments-alarm');
  const list = byId<HTMLOListElement>('alarm-comments-list');
  const none = byId('alarm-comments-none');
  const form = byId<HTMLFormElement>('alarm-comment-form');
  const text = form.elements.namedItem('text') as HTMLTextAreaElement;
  const add = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  const acknowledge = byId<HTMLButtonElement>('alarm-comment-ack');
  const status = byId('alarm-comment-status');
  const messages = byId('alarm-comment-messages');
  let shown: AlarmEvent | undefined;

  function show(event: AlarmEvent): void {
    shown = event;
    title.textContent = `alarm ${event.id}, ${event.message}`;
    list.replaceChildren(
      ...event.comments.map((c) =>
        h('li', {}, h('strong', {}, c.username), ' ', h('time', { datetime: new Date(c.timestamp).toISOString(), class: 'muted' }, formatTime(c.timestamp)), h('p', { class: 'comment-text' }, c.text)),
      ),
    );
    list.scrollTop = list.scrollHeight; // the newest is the one to read
    none.hidden = event.comments.length > 0;
    acknowledge.hidden = event.acknowledged;
  }

  async function send(withAcknowledgement: boolean): Promise<void> {
    const event = shown;
    if (!event) return;
    add.disabled = acknowledge.disabled = true;
    try {
      const updated = withAcknowledgement
        ? await put<AlarmEvent>(`/events/acknowledge/${event.id}`, { comment: text.value })
        : await post<AlarmEvent>(`/events/${event.id}/comments`, { text: text.value });
      text.value = '';
      showMessages(messages, undefined);
      learned(updated);
      if (shown?.id === updated.id) show(updated);
      say(status, withAcknowledgement ? `Alarm ${event.id} acknowledged with your comment` : `Comment added to alarm ${event.id}`, 'ok');
    } catch (err) {
      sayRefused(status, messages, err, 'Comment refused');
    } finally {
      add.disabled = acknowledge.disabled = false;
    }
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void send(false);
  });
  acknowledge.addEventListener('click', () => {
    if (form.reportValidity()) void send(true);
  });
  byId('alarm-comments-close').addEventListener('click', () => close());

  function close(): void {
    shown = undefined;
    panel.hidden = true;
    text.value = '';
    say(status, '');
    showMessages(messages, undefined);
  }

  return {
    open(event) {
      if (shown?.id !== event.id) {
        text.value = '';
        say(status, '');
        showMessages(messages, undefined);
      }
      show(event);
      panel.hidden = false;
      text.focus();
    },
    update(event) {
      if (shown?.id === event.id) show(event);
    },
    close,
  };
}
