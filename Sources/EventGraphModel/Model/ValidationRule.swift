/// Which rule of the model a commit broke: the `rule` of a `validation` error's context,
/// so that a service tells a denied delete from a value out of range, a failed regular
/// expression or a missing required value without reading the message.
///
/// ```swift
/// } catch let e as StoreError where e.code == .validation && e.rule == .deny {
///   // the object still has related objects its delete rule protects
/// }
/// ```
///
/// The names are the model file's keys for the rules (`minValue`, `regularExpression`, …).
/// Only EventGraph makes rules.
public struct ValidationRule: Sendable, Hashable, CustomStringConvertible {
  /// The rule's name, as the constant is spelled: stable, for logs and metrics.
  public let name: String

  private init(_ name: String) { self.name = name }

  public var description: String { name }

  /// A required (non-optional) attribute has no value, or a required relationship is empty.
  public static let required = ValidationRule("required")
  /// A transient attribute was given a value: the store keeps none.
  public static let transient = ValidationRule("transient")
  /// A value below its attribute's `minValue`.
  public static let minValue = ValidationRule("minValue")
  /// A value above its attribute's `maxValue`.
  public static let maxValue = ValidationRule("maxValue")
  /// A string or binary value shorter than its attribute's `minLength`.
  public static let minLength = ValidationRule("minLength")
  /// A string or binary value longer than its attribute's `maxLength`.
  public static let maxLength = ValidationRule("maxLength")
  /// A string that does not match its attribute's `regularExpression`.
  public static let regularExpression = ValidationRule("regularExpression")
  /// A to-many relationship with fewer targets than its `minCount`.
  public static let minCount = ValidationRule("minCount")
  /// A to-many relationship with more targets than its `maxCount`.
  public static let maxCount = ValidationRule("maxCount")
  /// A delete refused by a `deny` delete rule: the relationship still has targets.
  public static let deny = ValidationRule("deny")

  /// Every rule, in the order above.
  public static let all: [ValidationRule] = [
    .required, .transient, .minValue, .maxValue, .minLength, .maxLength, .regularExpression, .minCount, .maxCount,
    .deny,
  ]
}
