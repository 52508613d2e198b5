// Opt-in alerts for CRITICAL alarms (and LIFE_SAFETY), for an operator whose console sits in a
// background tab: a short beep (WebAudio, no audio file) when a new one is raised, and the count of
// unacknowledged ones in the tab title ("(3) Device-data console"). Both are off until ticked; the
// choice is kept in localStorage for the next visit. A chattering limit must not beep once per alarm:
// at most one beep every few seconds.
import { byId } from './dom.js';

const STORAGE_KEY = 'device-data-console.alarm-alerts';
const BEEP_GAP_MS = 5_000;

export const ALERT_LEVELS = new Set(['CRITICAL', 'LIFE_SAFETY']);

interface Choice {
  sound: boolean;
  title: boolean;
}

export interface AlarmAlerts {
  /** New alarms of an alert level were raised (or first seen) since the list was loaded. */
  raised(count: number): void;
  /** How many unacknowledged alarms of an alert level the list holds now. */
  unacknowledged(count: number): void;
  /** Logged out: the title as it was. */
  reset(): void;
}

function load(): Choice {
  try {
    const stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '{}') as Partial<Choice>;
    return { sound: stored.sound === true, title: stored.title === true };
  } catch {
    return { sound: false, title: false }; // storage off or garbage: the defaults
  }
}

function save(choice: Choice): void {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(choice));
  } catch {
    // storage off (private mode): the choice lasts for this page only
  }
}

export function alarmAlerts(): AlarmAlerts {
  const fieldset = byId<HTMLFieldSetElement>('alarm-alerts');
  const sound = fieldset.querySelector<HTMLInputElement>('input[name="sound"]')!;
  const title = fieldset.querySelector<HTMLInputElement>('input[name="title"]')!;
  const baseTitle = document.title;
  const choice = load();
  sound.checked = choice.sound;
  title.checked = choice.title;
  let audio: AudioContext | undefined;
  let lastBeep = 0;
  let count = 0;
  let beeps = 0;

  function showTitle(): void {
    document.title = choice.title && count > 0 ? `(${count}) ${baseTitle}` : baseTitle;
  }

  /** Browsers start audio only after a user gesture: the tick on the checkbox is one. */
  function wakeAudio(): AudioContext | undefined {
    try {
      audio ??= new AudioContext();
      if (audio.state === 'suspended') void audio.resume();
      return audio;
    } catch {
      return undefined; // no WebAudio: the title count still works
    }
  }

  function beep(): void {
    const ctx = wakeAudio();
    if (!ctx) return;
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = 'square';
    osc.frequency.value = 880;
    // A quick ramp up and down: a hard start or stop clicks.
    const t = ctx.currentTime;
    gain.gain.setValueAtTime(0, t);
    gain.gain.linearRampToValueAtTime(0.2, t + 0.01);
    gain.gain.setValueAtTime(0.2, t + 0.18);
    gain.gain.linearRampToValueAtTime(0, t + 0.2);
    osc.connect(gain).connect(ctx.destination);
    osc.start(t);
    osc.stop(t + 0.21);
    fieldset.dataset.beeps = String(++beeps); // what was sounded, for whoever checks (the tests)
  }

  fieldset.addEventListener('change', () => {
    choice.sound = sound.checked;
    choice.title = title.checked;
    save(choice);
    if (choice.sound) wakeAudio();
    showTitle();
  });

  // Ticked on an earlier visit: the page's first click or key press lets the audio start.
  for (const type of ['pointerdown', 'keydown'] as const) {
    document.addEventListener(type, () => choice.sound && wakeAudio(), { once: true, capture: true });
  }

  return {
    raised(n) {
      if (n <= 0 || !choice.sound) return;
      const now = Date.now();
      if (now - lastBeep < BEEP_GAP_MS) return;
      lastBeep = now;
      beep();
    },
    unacknowledged(n) {
      count = n;
      showTitle();
    },
    reset() {
      count = 0;
      document.title = baseTitle;
    },
  };
}
