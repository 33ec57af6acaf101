export * from './users.js';
export * from './tokens.js';
export * from './audit.js';
export * from './conversations.js';
export * from './knowledge.js';
export * from './kb-vectors.js';
export * from './feedback.js';
export * from './flags.js';
