using System.Runtime.CompilerServices;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>
/// The argument positions of a command's keys: its fixed range (first, last, step), then, for
/// commands that count their keys (SINTERCARD, ZUNIONSTORE, LMPOP...), the keys that follow the
/// numkeys argument. <see cref="Valid"/> is false when numkeys is not a positive integer that
/// fits the arguments; the handler then replies the error and touches no key.
/// </summary>
public struct KeyPositions
{
    private readonly int _fixedLast;
    private readonly int _step;
    private readonly int _countedFirst;
    private readonly int _countedLast;
    private readonly int _storeKey;
    private bool _storeKeyPending;
    private bool _finished;
    private int _current;

    /// <param name="storeKey">The index of a destination named by keyword in this call (<see cref="CommandSpec.StoreKey"/>), 0 for none.</param>
    public KeyPositions(CommandSpec spec, int argCount, ReadOnlySpan<byte> numKeys, int storeKey = 0, (int First, int Last)? range = null)
    {
        _storeKey = storeKey;
        _storeKeyPending = storeKey > 0;
        _finished = false;
        Valid = true;
        _step = Math.Max(spec.KeyStep, 1);
        _current = spec.FirstKey > 0 ? spec.FirstKey - _step : -1;
        _fixedLast = spec.FirstKey > 0 ? spec.LastKeyIndex(argCount) : -1;
        if (range is var (first, last))
        {
            _step = 1;
            _current = first - 1;
            _fixedLast = last;
        }
        _countedFirst = 0;
        _countedLast = -1;
        if (spec.KeyCountIndex <= 0)
            return;
        if (!NumberFormat.TryParseInt64(numKeys, out long count) || count <= 0 || count > argCount - spec.KeyCountIndex - 1)
        {
            Valid = false;
            _fixedLast = -1;
            return;
        }
        _countedFirst = spec.KeyCountIndex + 1;
        _countedLast = spec.KeyCountIndex + (int)count;
        if (_current < 0)
            _current = _countedFirst - 1;
    }

    public static KeyPositions Of(CommandSpec spec, ArgList args)
        => new(spec, args.Count, spec.KeyCountIndex > 0 && spec.KeyCountIndex < args.Count ? args[spec.KeyCountIndex] : default,
            spec.StoreKey is { } store ? store(args) : 0, spec.KeyRange is { } range ? range(args) : null);

    /// <summary>False when the numkeys argument is not usable.</summary>
    public readonly bool Valid { get; }

    public readonly int Current => _current;

    public readonly KeyPositions GetEnumerator() => this;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool MoveNext()
    {
        if (_finished)
            return false;
        if (_current < _fixedLast)
        {
            _current += _step;
            if (_current <= _fixedLast)
                return true;
        }
        if (_current < _countedFirst)
        {
            _current = _countedFirst;
            return _current <= _countedLast;
        }
        if (_current < _countedLast)
        {
            _current++;
            return true;
        }
        // Last, the destination a keyword named; the other ranges are done by then.
        if (_storeKeyPending)
        {
            _storeKeyPending = false;
            _finished = true;
            _current = _storeKey;
            return true;
        }
        return false;
    }
}
