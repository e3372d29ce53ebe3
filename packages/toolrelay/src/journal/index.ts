/** journal/: the file call journal (one process, survives its restarts). */
export { openFileCallJournal, FileCallJournal, type FileCallJournalOptions } from "./file-call-journal.js";
export { MAX_LISTED_DROPPED_LINES, type FileJournalRecovery } from "./file-journal-recovery.js";
export type { JournalLockOwner } from "./journal-file-lock.js";
