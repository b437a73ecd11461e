//! Reports people read: terminal tables and HTML pages.
