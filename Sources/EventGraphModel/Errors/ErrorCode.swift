/// The code of an error of `Domain` (`StoreError`, ``ModelError``, `ServiceError`, …):
/// what kind of refusal or fault the error is.
///
/// Compare it with the domain's constants (`e.code == .readOnly`, or in a `switch`), and log
/// its ``name``. Only EventGraph makes codes: a user's code cannot be mistaken for one that
/// EventGraph reports, and a constant that no longer exists is a compile error rather than a
/// comparison that silently never holds.
public struct ErrorCode<Domain>: Sendable, Hashable, CustomStringConvertible {
  /// The code's name, as the constant is spelled (`readOnly`): stable, for logs and metrics.
  public let name: String

  package init(_ name: String) { self.name = name }

  public var description: String { name }
}
