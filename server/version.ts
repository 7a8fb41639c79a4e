// The application version reported by /api/health and runner registrations.
// test/unit/version.unit.test.ts keeps it equal to package.json.
export const APP_VERSION = "0.1.0";
