/// An object's identity: a 64-bit number unique within a store, never reused.
///
/// Shown as `Entity/N` (`AddressBook/12`); the number alone identifies the object.
public struct ObjectID: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
  public let rawValue: UInt64
  public init(rawValue: UInt64) { self.rawValue = rawValue }
  public init(_ rawValue: UInt64) { self.rawValue = rawValue }
  public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
  public var description: String { "#\(rawValue)" }

  /// Parses `Entity/N`, giving the entity name and the number.
  public static func parse(_ text: String) -> (entity: String, id: ObjectID)? {
    guard let slash = text.lastIndex(of: "/") else { return nil }
    let name = String(text[..<slash])
    guard !name.isEmpty, let n = UInt64(text[text.index(after: slash)...]), n > 0 else { return nil }
    return (name, ObjectID(n))
  }
}
