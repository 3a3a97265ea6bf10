/**
 * Imported first by a test file that reads every log line: the service's loggers take their level
 * when their modules load, which the file's other imports already do, so the level must be set
 * before those imports are evaluated (ES modules evaluate imports in order).
 */
process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
process.env.POWERTOOLS_DEV = 'false';
