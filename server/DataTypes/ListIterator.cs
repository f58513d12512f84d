using Diagnostics.Server.DataTypes.Packed;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// Walks a <see cref="ListValue"/> element by element, node by node, towards the tail or the
/// head (<see cref="ListValue.From"/>). Each element is valid until the list next changes; an
/// integer element's text is the caller's to format (<see cref="ListpackElement.AsBytes"/>).
/// </summary>
public unsafe struct ListIterator
{
    private readonly ListValue* _list;
    private readonly bool _forward;
    private int _node;
    private int _offset; // of the next element in the node's listpack; -1: start at the node's end nearest the walk

    internal ListIterator(ListValue* list, int node, int offset, bool forward)
    {
        _list = list;
        _node = node;
        _offset = offset;
        _forward = forward;
    }

    public bool Next(out ListpackElement element)
    {
        while ((uint)_node < (uint)_list->NodeCount)
        {
            ListNode* node = _list->NodeAt(_node);
            if (node->IsPlain)
            {
                element = ListValue.PlainElement(node);
                Advance();
                return true;
            }
            byte* lp = node->Block;
            if (_forward)
            {
                if (_offset < 0)
                    _offset = NativeListpack.First;
                if (NativeListpack.IsEnd(lp, _offset))
                {
                    Advance();
                    continue;
                }
                element = NativeListpack.Read(lp, _offset, out _offset);
                return true;
            }
            if (_offset < 0)
                _offset = NativeListpack.Last(lp);
            element = NativeListpack.Read(lp, _offset, out _);
            if (_offset == NativeListpack.First)
                Advance();
            else
                _offset = NativeListpack.Previous(lp, _offset);
            return true;
        }
        element = default;
        return false;
    }

    private void Advance()
    {
        _node += _forward ? 1 : -1;
        _offset = -1;
    }
}
