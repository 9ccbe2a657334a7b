/* Intrusive doubly linked circular lists.
 *
 * A list head is a struct list whose next/prev point to itself when empty. An
 * element embeds a struct list and is recovered with list_elem(). An element
 * that is not in any list should be initialised with list_init() so that
 * list_inlist() tells the truth and list_del_init() is idempotent.
 */
#ifndef SLUICE_CORE_LIST_H
#define SLUICE_CORE_LIST_H

#include <stddef.h>

struct list {
	struct list *next;
	struct list *prev;
};

#define LIST_HEAD_INIT(l) { &(l), &(l) }

#define list_elem(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define list_for_each_safe(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

static inline void list_init(struct list *l)
{
	l->next = l->prev = l;
}

static inline int list_empty(const struct list *l)
{
	return l->next == l;
}

static inline int list_inlist(const struct list *l)
{
	return l->next != l;
}

static inline void list_append(struct list *head, struct list *el)
{
	el->prev = head->prev;
	el->next = head;
	head->prev->next = el;
	head->prev = el;
}

static inline void list_insert(struct list *head, struct list *el)
{
	el->next = head->next;
	el->prev = head;
	head->next->prev = el;
	head->next = el;
}

static inline void list_del_init(struct list *el)
{
	el->prev->next = el->next;
	el->next->prev = el->prev;
	list_init(el);
}

/* Moves every element of <from> to the tail of <to>; <from> ends empty. */
static inline void list_splice_tail(struct list *to, struct list *from)
{
	if (list_empty(from))
		return;
	from->next->prev = to->prev;
	to->prev->next = from->next;
	from->prev->next = to;
	to->prev = from->prev;
	list_init(from);
}

/* Moves every element of <from> to the head of <to>, keeping their order;
 * <from> ends empty. */
static inline void list_splice_head(struct list *to, struct list *from)
{
	if (list_empty(from))
		return;
	from->prev->next = to->next;
	to->next->prev = from->prev;
	to->next = from->next;
	from->next->prev = to;
	list_init(from);
}

#endif
