// A real SMTP server (npm smtp-server) on an ephemeral port for the mail tests: every message it takes
// is parsed (mailparser) and kept with its envelope; recipients can be refused by their address.
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  /** RCPT TO addresses. */
  rcptTo: string[];
  mailFrom: string;
  /** The authenticated user, when the session logged in. */
  user: unknown;
  parsed: ParsedMail;
}

export interface TestSmtp {
  port: number;
  /** smtp:// (or smtps:// with `secure`) URL of the server, credentials included when `auth` is given. */
  url: string;
  received: ReceivedMail[];
  /** Open client connections now. */
  readonly connections: number;
  close(): Promise<void>;
}

export interface TestSmtpOptions {
  /** Reply to RCPT TO for this address: an SMTP code and text (e.g. 550, 451); undefined accepts it. */
  refuse?: (address: string) => { code: number; text: string } | undefined;
  /** Require AUTH with these credentials (PLAIN/LOGIN). */
  auth?: { user: string; pass: string };
  /** Implicit TLS (smtps://) with smtp-server's own self-signed certificate. */
  secure?: boolean;
}

export async function startTestSmtp(options: TestSmtpOptions = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const serverOptions: SMTPServerOptions = {
    secure: options.secure ?? false,
    // No STARTTLS offer on plain connections: its self-signed certificate would be refused by the client.
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      const refusal = options.refuse?.(address.address);
      if (refusal) callback(Object.assign(new Error(refusal.text), { responseCode: refusal.code }));
      else callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          received.push({
            rcptTo: session.envelope.rcptTo.map((a) => a.address),
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            user: session.user,
            parsed,
          });
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  };
  const server = new SMTPServer(serverOptions);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  const credentials = options.auth ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.pass)}@` : '';
  const scheme = options.secure ? 'smtps' : 'smtp';
  return {
    port,
    url: `${scheme}://${credentials}127.0.0.1:${port}${options.secure ? '?tls.rejectUnauthorized=false' : ''}`,
    received,
    get connections() {
      return (server as unknown as { connections: Set<unknown> }).connections.size;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
