internal import CNATS

/// A failure reported by nats.c or by JetStream.
public struct NATSError: Error, Sendable, Hashable, CustomStringConvertible {
  /// nats.c's status, as its text (`"Timeout"`, `"No Responders Available For Request"`, …).
  public let status: String
  /// JetStream's error code (10071: wrong last sequence), 0 when JetStream gave none.
  public let code: Int
  /// What was being done, and nats.c's last error text when it has one.
  public let detail: String
  let statusValue: UInt32

  /// - Parameter fromNATS: whether nats.c reported the failure, so that its last error text
  ///   belongs to it; false for a refusal of this module's own.
  init(_ status: natsStatus, code: jsErrCode = jsErrCode(rawValue: 0), doing detail: String, fromNATS: Bool = true) {
    self.statusValue = status.rawValue
    self.status = String(cString: natsStatus_GetText(status))
    self.code = Int(code.rawValue)
    var last = natsStatus(rawValue: 0)
    var text = fromNATS ? nats_GetLastError(&last).map { String(cString: $0) } ?? "" : ""
    // nats.c puts where in its source the error arose first, "(conn.c:733): ": not the
    // reader's concern.
    if text.hasPrefix("("), let end = text.range(of: "): "), text[..<end.lowerBound].contains(".c:") {
      text = String(text[end.upperBound...])
    }
    self.detail = text.isEmpty || text == self.status ? detail : "\(detail): \(text)"
  }

  /// A publish fenced by an expected last sequence that the stream no longer has: another
  /// publisher wrote to it.
  public var isWrongLastSequence: Bool { code == Int(JSStreamWrongLastSequenceErr.rawValue) }

  /// A stream, or a message of it, that does not exist.
  public var isNotFound: Bool {
    statusValue == NATS_NOT_FOUND.rawValue || code == Int(JSStreamNotFoundErr.rawValue)
      || code == Int(JSNoMessageFoundErr.rawValue)
  }

  /// No server of the list answered.
  public var isNoServer: Bool { statusValue == NATS_NO_SERVER.rawValue }

  /// A failure that may pass (no answer in time, no leader yet, a reconnecting connection).
  ///
  /// A retry with the same message ID is safe.
  public var isTransient: Bool {
    [NATS_TIMEOUT, NATS_NO_RESPONDERS, NATS_CONNECTION_DISCONNECTED, NATS_IO_ERROR, NATS_STALE_CONNECTION]
      .contains { $0.rawValue == statusValue }
      || (statusValue == NATS_ERR.rawValue && code == 0 && detail.contains("leader"))
      // "JetStream system temporarily unavailable": a cluster electing its meta leader
      // after a node went away (found by JepsenTests: a candidate gave up on it).
      || code == Int(JSClusterNotAvailErr.rawValue)
  }

  public var description: String {
    code == 0 ? "\(detail) (\(status))" : "\(detail) (\(status), JetStream error \(code))"
  }
}

/// Turns a nats.c status into a thrown ``NATSError``.
func check(_ status: natsStatus, _ code: jsErrCode = jsErrCode(rawValue: 0), doing detail: @autoclosure () -> String)
  throws(NATSError)
{
  guard status != NATS_OK else { return }
  throw NATSError(status, code: code, doing: detail())
}
