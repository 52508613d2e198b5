// The one password rule: its length. Applied to ADMIN_PASSWORD (config.ts) and to every request body
// that sets a password: schemas/user.json (password) and schemas/login.json (newPassword) say it as
// minLength, which a JSON file cannot import; test/validation.test.ts checks they say this number.

/** Fewest characters a password may have. */
export const MIN_PASSWORD_LENGTH = 8;
