"""User feedback and event attachments (docs/feedback.md): what people write in the SDKs' feedback widget, in
a user report or in the crash-report dialog, and the files SDKs send with events."""
