// Usernames are unique ignoring case (API-DECISIONS "Faults and scale"): `Admin` beside `admin` is a
// conflict, while a login still matches the stored name exactly. The fold is computed here, not by
// SQL: lower() folds only ASCII under COLLATE "C" and follows the server's locale otherwise, so PGlite
// and a PostgreSQL server would disagree on names such as `Émile`.

/**
 * The name as uniqueness sees it: NFC, then upper- and lower-cased, so that `ß` and `SS`, `ſ` and `s`,
 * or `Σ`, `σ` and `ς` compare alike. For an ASCII name this is SQL's lower().
 */
export function usernameKey(username: string): string {
  return username.normalize('NFC').toUpperCase().toLowerCase();
}
