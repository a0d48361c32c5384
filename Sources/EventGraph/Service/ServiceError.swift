/// Why the service layer refused a request.
///
/// A struct rather than an enum, so that new kinds of refusal can be added without
/// breaking callers (GRDB's `DatabaseError` and `ResultCode` do the same). Match on the
/// ``code``; the ``context`` says what, in the shape that belongs to the code:
///
/// ```swift
/// do {
///   try store.write(metadata: CommitMetadata(idempotencyKey: key)) { tx in try record(tx) }
/// } catch let e as ServiceError where e.code == .alreadyCommitted {
///   if case .committed(_, let commit) = e.context { print("already in commit \(commit.number)") }
/// }
/// ```
///
/// Only EventGraph makes these errors. Errors compare equal when their code and context
/// are equal.
public struct ServiceError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of refusal an error is; compare with the constants (`e.code == .storeClosed`).
  public typealias Code = ErrorCode<ServiceError>

  /// What kind of refusal this is.
  public let code: Code
  /// What was refused, in the shape that belongs to ``code`` (each case names its codes).
  public let context: Context

  /// What a service refused.
  public enum Context: Sendable, Hashable {
    /// An idempotency key that cannot be one: ``ErrorCode/invalidIdempotencyKey``.
    case key(String)
    /// A consumer or projection name: `invalidName`,
    /// ``ErrorCode/projectionAlreadyRegistered``.
    case name(String)
    /// An idempotency key and the first commit that carried it:
    /// ``ErrorCode/alreadyCommitted``.
    case committed(key: String, commit: CommitInfo)
    /// The store directory: ``ErrorCode/storeClosed``.
    case store(path: String)
    /// A consumer group and what is wrong with the request: `invalidGroup`.
    case group(String, detail: String)
    /// A consumer group and the sequence it has parked no commit at: `notParked`.
    case parked(group: String, sequence: UInt64)
  }

  private init(_ code: Code, _ context: Context) {
    self.code = code
    self.context = context
  }

  public var description: String {
    switch (code, context) {
    case (.invalidIdempotencyKey, .key(let k)):
      return "idempotency key '\(k.prefix(40))' must be 1 to 400 bytes of UTF-8"
    case (.invalidName, .name(let n)):
      return "'\(n.prefix(40))' is not a valid consumer or projection name (1 to 200 bytes, no ':')"
    case (.projectionAlreadyRegistered, .name(let n)):
      return "a projection named '\(n)' is already registered with this store"
    case (.alreadyCommitted, .committed(let k, let commit)):
      return
        "idempotency key '\(k.prefix(40))' was already committed (commit \(commit.number) at sequence \(commit.firstSequence))"
    case (.storeClosed, .store(let path)): return "\(path) is being closed: no more commits are taken"
    case (.invalidGroup, .group(let g, let detail)): return "consumer group '\(g)': \(detail)"
    case (.notParked, .parked(let g, let sequence)):
      return "consumer group '\(g)' has parked no commit at sequence \(sequence)"
    default: return "service error \(code)"
    }
  }

  /// Checks a consumer or projection name.
  static func checkName(_ name: String) throws {
    let n = name.utf8.count
    guard n >= 1, n <= 200, !name.contains(":") else { throw ServiceError.invalidName(name) }
  }
}

// MARK: - The kinds of refusal

extension ServiceError {
  static func invalidIdempotencyKey(_ key: String) -> Self { .init(.invalidIdempotencyKey, .key(key)) }

  static func invalidName(_ name: String) -> Self { .init(.invalidName, .name(name)) }

  static func projectionAlreadyRegistered(_ name: String) -> Self { .init(.projectionAlreadyRegistered, .name(name)) }

  static func alreadyCommitted(key: String, commit: CommitInfo) -> Self {
    .init(.alreadyCommitted, .committed(key: key, commit: commit))
  }

  static func storeClosed(path: String) -> Self { .init(.storeClosed, .store(path: path)) }

  static func invalidGroup(_ group: String, _ detail: String) -> Self {
    .init(.invalidGroup, .group(group, detail: detail))
  }

  static func notParked(_ group: String, _ sequence: UInt64) -> Self {
    .init(.notParked, .parked(group: group, sequence: sequence))
  }
}

// MARK: - The codes

extension ErrorCode where Domain == ServiceError {
  /// An idempotency key must be 1 to 400 bytes of UTF-8.
  public static var invalidIdempotencyKey: Self { Self("invalidIdempotencyKey") }
  /// A consumer or projection name must be 1 to 200 bytes, without a `:`.
  public static var invalidName: Self { Self("invalidName") }
  /// A projection of this name is already registered with the store.
  public static var projectionAlreadyRegistered: Self { Self("projectionAlreadyRegistered") }
  /// The synchronous ``EventStore/write(metadata:_:)`` was given an idempotency key that
  /// is already in the store: nothing was written; `commit` is the first commit with the key.
  public static var alreadyCommitted: Self { Self("alreadyCommitted") }
  /// The store object is being released: no more commits are taken.
  public static var storeClosed: Self { Self("storeClosed") }
  /// A consumer group's options are out of range, or name another partition count than
  /// the group's.
  public static var invalidGroup: Self { Self("invalidGroup") }
  /// A consumer group has parked no commit at the sequence named.
  public static var notParked: Self { Self("notParked") }

  /// Every code of the domain, in the order they are declared: the suite meets each with
  /// the operation that makes it.
  static let all: [Self] = [
    .invalidIdempotencyKey, .invalidName, .projectionAlreadyRegistered, .alreadyCommitted, .storeClosed,
    .invalidGroup, .notParked,
  ]
}
