import EventGraphModel

/// The static type of an expression, and what a caller declares a `$variable` to be.
///
/// ```swift
/// // $source is an AddressBook object; $limit one int64; $names a collection of strings.
/// let variables: [String: QueryType] = [
///   "source": .object(addressBook.id), "limit": .value(.int64), "names": .values(.string),
/// ]
/// ```
public struct QueryType: Sendable, Hashable, CustomStringConvertible {
  /// What one element is.
  public enum Element: Sendable, Hashable {
    /// The type of the `nil` literal: compatible with everything.
    case null
    /// A value of an attribute type.
    case attribute(AttributeType)
    /// An object of an entity (or of one of its sub-entities).
    case object(EntityID)
  }

  public let element: Element
  /// Whether the expression gives a collection (a to-many key path, `{…}`) rather than
  /// at most one element.
  public let isToMany: Bool

  public init(_ element: Element, isToMany: Bool = false) {
    self.element = element
    self.isToMany = isToMany
  }

  /// One value (or nil) of an attribute type.
  public static func value(_ type: AttributeType) -> QueryType { QueryType(.attribute(type)) }
  /// A collection of values of an attribute type.
  public static func values(_ type: AttributeType) -> QueryType { QueryType(.attribute(type), isToMany: true) }
  /// One object (or none) of an entity.
  public static func object(_ entity: EntityID) -> QueryType { QueryType(.object(entity)) }
  /// A collection of objects of an entity.
  public static func objects(_ entity: EntityID) -> QueryType { QueryType(.object(entity), isToMany: true) }
  /// The type of `nil`.
  public static let null = QueryType(.null)

  public var description: String {
    let one: String =
      switch element {
      case .null: "nil"
      case .attribute(let t): t.rawValue
      case .object(let e): "object of entity #\(e.rawValue)"
      }
    return isToMany ? "to-many \(one)" : one
  }
}

extension AttributeType {
  /// Strings and URIs compare with each other by their text.
  var isText: Bool { self == .string || self == .uri }

  /// Whether `<`, `>`, `BETWEEN`, `@min` and `@max` apply.
  var isOrdered: Bool { isNumeric || isText || self == .date }
}
