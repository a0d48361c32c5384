/// Why the service layer refused a request.
///
/// A struct rather than an enum, so that new kinds of refusal can be added without
/// breaking callers (GRDB's `DatabaseError` and `ResultCode` do the same). Match on the
/// ``code`` and read the fields that say what:
///
/// ```swift
/// do {
///   try store.write(metadata: CommitMetadata(idempotencyKey: key)) { tx in try record(tx) }
/// } catch let e as ServiceError where e.code == .alreadyCommitted {
///   print("already in commit \(e.commit?.number ?? 0)")
/// }
/// ```
///
/// Errors compare equal when their code and all their fields are equal.
public struct ServiceError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of refusal an error is; compare with the constants (`e.code == .storeClosed`).
  public typealias Code = ErrorCode<ServiceError>

  /// What kind of refusal this is.
  public let code: Code
  /// The idempotency key at fault.
  public let key: String?
  /// The consumer or projection name at fault.
  public let name: String?
  /// The store directory (``ErrorCode/storeClosed``).
  public let path: String?
  /// The first commit that carried the key (``ErrorCode/alreadyCommitted``).
  public let commit: CommitInfo?

  private init(
    _ code: Code, key: String? = nil, name: String? = nil, path: String? = nil, commit: CommitInfo? = nil
  ) {
    self.code = code
    self.key = key
    self.name = name
    self.path = path
    self.commit = commit
  }

  public var description: String {
    let (k, n) = ((key ?? "").prefix(40), (name ?? "").prefix(40))
    switch code {
    case .invalidIdempotencyKey: return "idempotency key '\(k)' must be 1 to 400 bytes of UTF-8"
    case .invalidName: return "'\(n)' is not a valid consumer or projection name (1 to 200 bytes, no ':')"
    case .projectionAlreadyRegistered: return "a projection named '\(name ?? "")' is already registered with this store"
    case .alreadyCommitted:
      return
        "idempotency key '\(k)' was already committed (commit \(commit?.number ?? 0) at sequence \(commit?.firstSequence ?? 0))"
    case .storeClosed: return "\(path ?? "") is being closed: no more commits are taken"
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
  public static func invalidIdempotencyKey(_ key: String) -> Self { .init(.invalidIdempotencyKey, key: key) }

  public static func invalidName(_ name: String) -> Self { .init(.invalidName, name: name) }

  public static func projectionAlreadyRegistered(_ name: String) -> Self {
    .init(.projectionAlreadyRegistered, name: name)
  }

  public static func alreadyCommitted(key: String, commit: CommitInfo) -> Self {
    .init(.alreadyCommitted, key: key, commit: commit)
  }

  public static func storeClosed(path: String) -> Self { .init(.storeClosed, path: path) }
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
}
